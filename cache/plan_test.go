package cache

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// bruteFits checks a start at at against every window by counting, for
// each instant where an occupancy begins, the starts covering it.
func bruteFits(ws []Window, taken []int64, at int64) bool {
	all := append(slices.Clone(taken), at)
	for _, w := range ws {
		per := w.Per.Milliseconds()
		for _, p := range all {
			n := 0
			for _, s := range all {
				if s <= p && p < s+per {
					n++
				}
			}
			if n > w.N {
				return false
			}
		}
	}
	return true
}

// TestPlanAgainstBruteForce compares fits and earliest with counting, on
// random hosts: fits agrees at every instant, and earliest is the first
// instant that fits.
func TestPlanAgainstBruteForce(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		ws := []Window{{N: 1 + r.IntN(3), Per: time.Duration(5+r.IntN(20)) * time.Millisecond}}
		if r.IntN(2) == 0 {
			ws = append(ws, Window{N: 2 + r.IntN(4), Per: time.Duration(20+r.IntN(60)) * time.Millisecond})
		}
		var taken []int64
		for range r.IntN(6) {
			s := int64(r.IntN(100))
			// Only sets that already keep the windows, as a store holds.
			if bruteFits(ws, taken, s) {
				taken = append(taken, s)
				slices.Sort(taken)
			}
		}
		for at := int64(0); at < 200; at++ {
			got, _ := fits(ws, taken, at)
			if want := bruteFits(ws, taken, at); got != want {
				t.Fatalf("trial %d: fits(%v, %v, %d) = %v, brute force %v", trial, ws, taken, at, got, want)
			}
		}
		from := int64(r.IntN(100))
		at, _ := earliest(ws, taken, from)
		want := from
		for !bruteFits(ws, taken, want) {
			want++
		}
		if at != want {
			t.Fatalf("trial %d: earliest(%v, %v, %d) = %d, want %d", trial, ws, taken, from, at, want)
		}
	}
}
