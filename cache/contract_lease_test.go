package cache

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The contract cases of Peek, Renew and progress entries; runStoreContract
// runs them on every store.
var leaseCases = []struct {
	name string
	run  func(t *testing.T, newStore factory)
}{
	{"peek answers as admit would and charges nothing", testPeekChargesNothing},
	{"peek sees window edges to the millisecond", testPeekWindowEdge},
	{"peek sees in flight, concurrency and cache", testPeekStates},
	{"renew keeps a lease past its TTL", testRenewKeeps},
	{"an unrenewed lease frees at its TTL and renews no more", testRenewLapsed},
	{"renew of a released or foreign lease is lost", testRenewReleased},
	{"progress is kept, refreshed, expires and is dropped", testProgress},
	{"progress bad input", testProgressBadInput},
}

func wantPeek(tb testing.TB, s Store, url string, want Decision, wait time.Duration, reason string) Admission {
	tb.Helper()
	a, err := s.Peek(bg, url)
	if err != nil {
		tb.Fatalf("Peek(%s): %v", url, err)
	}
	if a.Decision != want || a.RetryAfter != wait || a.Reason != reason || a.Lease != (Lease{}) {
		tb.Fatalf("Peek(%s) = %s retry %v reason %q lease %+v, want %s retry %v reason %q and no lease",
			url, a.Decision, a.RetryAfter, a.Reason, a.Lease, want, wait, reason)
	}
	return a
}

func testPeekChargesNothing(t *testing.T, newStore factory) {
	l := Defaults()
	l.Windows = []Window{{N: 2, Per: time.Minute}}
	h := newStore(t, l, slowPoll)
	for range 10 {
		wantPeek(t, h, urlA, Admitted, 0, "")
	}
	if got := h.ttls(t); len(got) != 0 {
		t.Fatalf("after 10 peeks the store holds %v, want nothing", strings.Join(keysOf(got), ", "))
	}
	// Both starts of the 2/1m window are still free.
	run(t, h, urlA, "id1")
	h.clock.Set(time.Millisecond)
	wantPeek(t, h, urlB, Admitted, 0, "")
	run(t, h, urlB, "id2")
	h.clock.Set(2 * time.Millisecond)
	wantPeek(t, h, urlC, Refused, time.Minute-2*time.Millisecond, "2/1m")
	wantRefused(t, h, urlC, "id3", time.Minute-2*time.Millisecond, "2/1m")
}

func testPeekWindowEdge(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	h.clock.Set(time.Second)
	mustComplete(t, h, l, "r", false)
	h.clock.Set(time.Minute - time.Millisecond)
	wantPeek(t, h, urlB, Refused, time.Millisecond, "1/1m")
	h.clock.Set(time.Minute)
	wantPeek(t, h, urlB, Admitted, 0, "")
	mustAdmit(t, h, urlB, "id2")
}

func testPeekStates(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	h.clock.Set(10 * time.Second)
	a := wantPeek(t, h, urlA, InFlight, 0, "")
	if a.RunningID != "id1" {
		t.Fatalf("Peek of the running URL names %q, want id1", a.RunningID)
	}
	wantPeek(t, h, urlB, Refused, 80*time.Second, ReasonConcurrency)
	wantPeek(t, h, urlOther, Admitted, 0, "")
	h.clock.Set(20 * time.Second)
	mustComplete(t, h, l, "report-a", false)
	h.clock.Set(25 * time.Second)
	a = wantPeek(t, h, urlA, Cached, 0, "")
	wantEntry(t, "peeked entry", a.Entry, "id1", "report-a", 5*time.Second, false)
	wantPeek(t, h, urlB, Refused, 35*time.Second, "1/1m")
}

func testRenewKeeps(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll) // LeaseTTL 90s
	l := mustAdmit(t, h, urlA, "id1")
	for _, at := range []time.Duration{30 * time.Second, 89 * time.Second, 178 * time.Second} {
		h.clock.Set(at)
		if err := h.Renew(bg, l); err != nil {
			t.Fatalf("Renew at +%v: %v", at, err)
		}
	}
	// Renewed at 178s: the lease holds until 268s, to the millisecond.
	h.clock.Set(268*time.Second - time.Millisecond)
	wantRefused(t, h, urlB, "id2", time.Millisecond, ReasonConcurrency)
	if a, err := h.Admit(bg, urlA, "id3"); err != nil || a.Decision != InFlight || a.RunningID != "id1" {
		t.Fatalf("Admit of the renewed URL = %+v, %v; want in flight of id1", a, err)
	}
	mustComplete(t, h, l, "long", false)
	wantHit(t, h, urlA, "id1", "long", 0)
}

func testRenewLapsed(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	h.clock.Set(30 * time.Second)
	if err := h.Renew(bg, l); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	// The holder died after its heartbeat at 30s: free at 120s.
	h.clock.Set(120*time.Second - time.Millisecond)
	wantPeek(t, h, urlB, Refused, time.Millisecond, ReasonConcurrency)
	h.clock.Set(120 * time.Second)
	if err := h.Renew(bg, l); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Renew at the expiry: %v, want ErrLeaseLost", err)
	}
	wantPeek(t, h, urlA, Admitted, 0, "")
	mustAdmit(t, h, urlB, "id2")
	if err := h.Renew(bg, l); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Renew after another admission: %v, want ErrLeaseLost", err)
	}
}

func testRenewReleased(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	if err := h.Renew(bg, Lease{Host: l.Host, URL: urlB, ID: l.ID}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Renew naming another URL: %v, want ErrLeaseLost", err)
	}
	if err := h.Renew(bg, Lease{Host: l.Host, URL: urlA, ID: "other"}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Renew of an id without a lease: %v, want ErrLeaseLost", err)
	}
	mustComplete(t, h, l, "r", false)
	if err := h.Renew(bg, l); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Renew after Complete: %v, want ErrLeaseLost", err)
	}
	if err := h.Renew(bg, Lease{}); err == nil || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Renew of a zero lease: %v, want an input error", err)
	}
}

func wantProgress(tb testing.TB, s Store, id string, want Progress, found bool) {
	tb.Helper()
	got, ok, err := s.Progress(bg, id)
	same := got.UpdatedAt.Equal(want.UpdatedAt)
	got.UpdatedAt, want.UpdatedAt = time.Time{}, time.Time{}
	if err != nil || ok != found || got != want || !same {
		tb.Fatalf("Progress(%s) = %+v, %v, %v; want %+v, %v", id, got, ok, err, want, found)
	}
}

func testProgress(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	wantProgress(t, h, "id1", Progress{}, false)
	q := Progress{ID: "id1", URL: urlA, Status: ProgressQueued, Position: 3}
	if err := h.SetProgress(bg, q); err != nil {
		t.Fatalf("SetProgress: %v", err)
	}
	q.UpdatedAt = t0
	wantProgress(t, h, "id1", q, true)
	wantProgress(t, h, "id2", Progress{}, false)

	h.clock.Set(time.Minute)
	r := Progress{ID: "id1", URL: urlA, Status: ProgressRunning, Step: "render"}
	if err := h.SetProgress(bg, r); err != nil {
		t.Fatalf("SetProgress: %v", err)
	}
	r.UpdatedAt = t0.Add(time.Minute)
	// Refreshed at 1m: alive until 1m + ProgressTTL, to the millisecond.
	h.clock.Set(time.Minute + ProgressTTL - time.Millisecond)
	wantProgress(t, h, "id1", r, true)
	h.clock.Set(time.Minute + ProgressTTL)
	wantProgress(t, h, "id1", Progress{}, false)

	if err := h.SetProgress(bg, q); err != nil {
		t.Fatalf("SetProgress: %v", err)
	}
	if err := h.DropProgress(bg, "id1"); err != nil {
		t.Fatalf("DropProgress: %v", err)
	}
	wantProgress(t, h, "id1", Progress{}, false)
	if err := h.DropProgress(bg, "never-set"); err != nil {
		t.Fatalf("DropProgress of an id never set: %v", err)
	}
}

func testProgressBadInput(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	for _, p := range []Progress{
		{URL: urlA, Status: ProgressQueued},
		{ID: "a b", URL: urlA, Status: ProgressQueued},
		{ID: "id1", Status: ProgressQueued},
		{ID: "id1", URL: urlA, Status: "done"},
		{ID: "id1", URL: urlA, Status: ProgressQueued, Position: -1},
	} {
		if err := h.SetProgress(bg, p); !errors.Is(err, ErrNoProgress) {
			t.Errorf("SetProgress(%+v): %v, want ErrNoProgress", p, err)
		}
	}
	wantProgress(t, h, "id1", Progress{}, false)
	for _, call := range []func() error{
		func() error { _, err := h.Peek(bg, "/relative"); return err },
		func() error { _, err := h.Peek(bg, "https://{x}/"); return err },
	} {
		if err := call(); err == nil || errors.Is(err, ErrUnavailable) {
			t.Errorf("Peek of a bad URL: %v, want an input error", err)
		}
	}
}
