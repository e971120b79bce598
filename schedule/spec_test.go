package schedule

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		min  time.Duration
		want error
		iv   time.Duration
	}{
		{"daily", 24 * time.Hour, nil, 24 * time.Hour},
		{"weekly", 24 * time.Hour, nil, 7 * 24 * time.Hour},
		{"6h", time.Hour, nil, 6 * time.Hour},
		{"90s", time.Second, nil, 90 * time.Second},
		{"1h", 24 * time.Hour, ErrTooFrequent, 0},
		{"daily", 48 * time.Hour, ErrTooFrequent, 0},
		{"hourly", time.Second, ErrBadSchedule, 0},
		{"-5h", time.Second, ErrBadSchedule, 0},
		{"0s", time.Second, ErrBadSchedule, 0},
		{"500ms", time.Millisecond, ErrBadSchedule, 0},
		{"10000h", time.Second, ErrBadSchedule, 0},
		{"", time.Second, ErrBadSchedule, 0},
	} {
		t.Run(tc.in, func(t *testing.T) {
			sp, err := ParseSpec(tc.in, tc.min)
			if !errors.Is(err, tc.want) || (err == nil && sp.Interval != tc.iv) {
				t.Fatalf("ParseSpec(%q, %s) = %+v, %v; want %v", tc.in, tc.min, sp, err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.in)) {
				t.Fatalf("the error does not quote the schedule: %v", err)
			}
		})
	}
}

func TestParseWindow(t *testing.T) {
	w, err := ParseWindow("22:30-02:00", time.UTC)
	if err != nil || w.Start != 22*time.Hour+30*time.Minute || w.End != 26*time.Hour || w.String() != "22:30-02:00" {
		t.Fatalf("ParseWindow = %+v, %v", w, err)
	}
	for _, bad := range []string{"", "01:00", "1-5", "25:00-01:00", "01:00-01:00", "01:60-02:00", "01:5-02:00"} {
		if _, err := ParseWindow(bad, time.UTC); err == nil {
			t.Errorf("ParseWindow(%q) accepted", bad)
		}
	}
}

// TestScheduleSlots: runs are stable per site, daily ones inside the window
// of the operator's time zone (across a DST change too), weekly ones on
// one weekday, intervals exactly an interval apart.
func TestScheduleSlots(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := ParseWindow("01:00-05:00", berlin)
	daily, _ := ParseSpec("daily", 0)
	weekly, _ := ParseSpec("weekly", 0)
	every, _ := ParseSpec("7h", 0)
	start := time.Date(2026, 3, 20, 12, 0, 0, 0, berlin) // DST begins 2026-03-29
	for i := range 200 {
		id := fmt.Sprintf("s_%d", i)
		t0 := start
		var prevDay time.Time
		for range 15 {
			next := daily.Next(id, t0, w)
			local := next.In(berlin)
			tod := time.Duration(local.Hour())*time.Hour + time.Duration(local.Minute())*time.Minute
			if tod < time.Hour || tod >= 5*time.Hour || !next.After(t0) {
				t.Fatalf("%s: daily run at %s (after %s), outside 01:00-05:00 Berlin", id, local, t0)
			}
			if !prevDay.IsZero() && local.Minute() != prevDay.Minute() {
				t.Fatalf("%s: daily minute moved from %s to %s", id, prevDay, local)
			}
			if p := daily.Prev(id, next, w); !p.Equal(next) {
				t.Fatalf("%s: Prev(Next) = %s, want %s", id, p, next)
			}
			prevDay, t0 = local, next
		}
		n1 := weekly.Next(id, start, w)
		n2 := weekly.Next(id, n1, w)
		if d := n2.Sub(n1); d < 7*24*time.Hour-time.Hour || d > 7*24*time.Hour+time.Hour || n1.In(berlin).Weekday() != n2.In(berlin).Weekday() {
			t.Fatalf("%s: weekly runs %s and %s", id, n1, n2)
		}
		e1 := every.Next(id, start, w)
		if e2 := every.Next(id, e1, w); e2.Sub(e1) != 7*time.Hour {
			t.Fatalf("%s: 7h runs %s apart", id, e2.Sub(e1))
		}
	}
}

// TestWindowSpread prints the histogram of 10,000 daily sites' start
// times over the window by quarter hour, and checks that no quarter hour
// holds more than 1.3 times its share.
func TestWindowSpread(t *testing.T) {
	w, _ := ParseWindow(DefaultWindow, time.UTC)
	daily, _ := ParseSpec("daily", 0)
	day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	quarters := make([]int, 16)
	minutes := map[int]int{}
	const n = 10000
	for i := range n {
		at := daily.Next(fmt.Sprintf("s_%08d", i), day, w)
		off := at.Sub(time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC))
		if off < 0 || off >= 4*time.Hour {
			t.Fatalf("site %d at %s, outside the window", i, at)
		}
		quarters[int(off/(15*time.Minute))]++
		minutes[int(off/time.Minute)]++
	}
	busiest := 0
	for _, c := range minutes {
		busiest = max(busiest, c)
	}
	var b strings.Builder
	for q, c := range quarters {
		fmt.Fprintf(&b, "%02d:%02d %4d %s\n", 1+q/4, q%4*15, c, strings.Repeat("#", c/20))
		if c > n/16*13/10 {
			t.Errorf("quarter %d holds %d starts, more than 1.3 x %d", q, c, n/16)
		}
	}
	t.Logf("10,000 daily sites over %s, starts per quarter hour (mean %d); busiest minute %d (mean %.1f):\n%s",
		DefaultWindow, n/16, busiest, float64(n)/240, b.String())
}
