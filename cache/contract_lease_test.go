package cache

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// The contract cases of reservations, leases, renewals and progress
// entries; runStoreContract runs them on every store.
var leaseCases = []struct {
	name string
	run  func(t *testing.T, newStore factory)
}{
	{"reservations queue starts a window apart and refuse past the bound", testReserveQueue},
	{"admit honours reservations and moves a refused one", testAdmitHonoursReservations},
	{"reserved starts keep the start slack beyond a window", testReserveSlack},
	{"one URL reserved twice shares one start", testReserveSameURL},
	{"a reserved start put off says which limit", testReserveReason},
	{"reserve sees cache, in flight and the running audit", testReserveStates},
	{"a reservation lapses ReserveGrace past its time", testReserveLapses},
	{"a lease lives at least LeaseMin whatever the renewals", testLeaseMin},
	{"renew keeps a lease past its TTL", testRenewKeeps},
	{"an unrenewed lease frees at its TTL and renews no more", testRenewLapsed},
	{"renew of a released or foreign lease is lost", testRenewReleased},
	{"progress is kept, refreshed, expires and is dropped", testProgress},
	{"a queued audit's progress lives past its start", testProgressStartsAt},
	{"a kept progress entry lives its Keep", testProgressKept},
	{"progress bad input", testProgressBadInput},
}

// within is the bound a submitter waits for a queued audit's start in
// these cases: the hard limit plus a minute.
const reserveWithin = 135 * time.Second

func wantReserved(tb testing.TB, s Store, url, id string, at time.Duration) {
	tb.Helper()
	a, err := s.Reserve(bg, url, id, reserveWithin)
	if err != nil {
		tb.Fatalf("Reserve(%s, %s): %v", url, id, err)
	}
	if a.Decision != Reserved || t0Plus(a.StartsAt) != at {
		tb.Fatalf("Reserve(%s, %s) = %s at t0+%v %+v, want reserved at t0+%v", url, id, a.Decision, t0Plus(a.StartsAt), a, at)
	}
}

func wantReserveRefused(tb testing.TB, s Store, url, id string, wait time.Duration, reason string) {
	tb.Helper()
	a, err := s.Reserve(bg, url, id, reserveWithin)
	if err != nil {
		tb.Fatalf("Reserve(%s, %s): %v", url, id, err)
	}
	if a.Decision != Refused || a.RetryAfter != wait || a.Reason != reason {
		tb.Fatalf("Reserve(%s, %s) = %s retry %v reason %q, want refused retry %v reason %q",
			url, id, a.Decision, a.RetryAfter, a.Reason, wait, reason)
	}
}

// wantMoved wants Admit refused with wait and the reservation moved to
// t0+at.
func wantMoved(tb testing.TB, s Store, url, id string, wait time.Duration, reason string, at time.Duration) {
	tb.Helper()
	a, err := s.Admit(bg, url, id)
	if err != nil {
		tb.Fatalf("Admit(%s, %s): %v", url, id, err)
	}
	if a.Decision != Refused || a.RetryAfter != wait || a.Reason != reason || t0Plus(a.StartsAt) != at {
		tb.Fatalf("Admit(%s, %s) = %s retry %v reason %q moved to t0+%v, want refused retry %v reason %q moved to t0+%v",
			url, id, a.Decision, a.RetryAfter, a.Reason, t0Plus(a.StartsAt), wait, reason, at)
	}
}

func testReserveReason(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	for _, c := range []struct {
		url, id string
		at      time.Duration
		reason  string
	}{
		{urlA, "q1", 0, ""},
		{urlB, "q2", time.Minute, "1/1m"},
	} {
		a, err := h.Reserve(bg, c.url, c.id, reserveWithin)
		if err != nil || a.Decision != Reserved || t0Plus(a.StartsAt) != c.at || a.Reason != c.reason {
			t.Fatalf("Reserve(%s) = %+v, %v; want reserved at t0+%v, reason %q", c.url, a, err, c.at, c.reason)
		}
	}
}

func testReserveQueue(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	wantReserved(t, h, urlA, "q1", 0)
	wantReserved(t, h, urlB, "q2", time.Minute)
	wantReserved(t, h, urlC, "q3", 2*time.Minute)
	// The fourth would start at 3m, 45s past the bound: refused, and it
	// holds nothing.
	wantReserveRefused(t, h, urlA+"?4", "q4", 45*time.Second, "1/1m")
	// Reserving again with the same id replaces its reservation.
	wantReserved(t, h, urlC, "q3", 2*time.Minute)
	// Other hosts are independent.
	wantReserved(t, h, urlOther, "o1", 0)
	// Nothing has started: no window was charged by reserving.
	if err := h.Unreserve(bg, urlA, "q1"); err != nil {
		t.Fatalf("Unreserve: %v", err)
	}
	if err := h.Unreserve(bg, urlA, "never"); err != nil {
		t.Fatalf("Unreserve of an id without a reservation: %v", err)
	}
	wantReserved(t, h, urlA+"?5", "q5", 0)
	// The hour's five starts: 0, 1m, 2m taken; 3m and 4m would be the
	// rest, beyond the bound anyway.
	h.clock.Set(2 * time.Minute)
	wantReserved(t, h, urlA+"?6", "q6", 3*time.Minute)
}

// testSlackAfterLateStart: the first of two reserved audits starts late;
// the second then waits for a window plus the slack after that start, and
// its reservation moves there.
func testSlackAfterLateStart(t *testing.T, newStore factory) {
	l := Defaults()
	l.StartSlack = 500 * time.Millisecond
	h := newStore(t, l, slowPoll)
	wantReserved(t, h, urlA, "q1", 0)
	wantReserved(t, h, urlB, "q2", time.Minute+500*time.Millisecond)
	h.clock.Set(600 * time.Millisecond) // q1's renderer came late
	mustComplete(t, h, mustAdmit(t, h, urlA, "q1"), "r1", false)
	h.clock.Set(time.Minute + 500*time.Millisecond)
	wantMoved(t, h, urlB, "q2", 600*time.Millisecond, "1/1m", time.Minute+1100*time.Millisecond)
	h.clock.Set(time.Minute + 1100*time.Millisecond)
	mustAdmit(t, h, urlB, "q2")
}

func testReserveSameURL(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	wantReserved(t, h, urlA, "q1", 0)
	// Ten submissions of the URL at once, before the queue joins them:
	// each is told the one start, and none takes another.
	for i := range 10 {
		wantReserved(t, h, urlA, fmt.Sprintf("dup%d", i), 0)
	}
	wantReserved(t, h, urlB, "q2", time.Minute)
	// A duplicate giving its start back frees nothing: it was q1's.
	if err := h.Unreserve(bg, urlA, "dup3"); err != nil {
		t.Fatal(err)
	}
	wantReserved(t, h, urlC, "q3", 2*time.Minute)
	// The URL's admission consumes its reservation, under whichever id
	// the queue ran it.
	mustComplete(t, h, mustAdmit(t, h, urlA, "dup5"), "r", false)
	h.clock.Set(time.Minute)
	mustAdmit(t, h, urlB, "q2")
}

func testReserveSlack(t *testing.T, newStore factory) {
	t.Run("late first start", func(t *testing.T) { testSlackAfterLateStart(t, newStore) })
	l := Defaults()
	l.StartSlack = 500 * time.Millisecond
	h := newStore(t, l, slowPoll)
	wantReserved(t, h, urlA, "q1", 0)
	wantReserved(t, h, urlB, "q2", time.Minute+500*time.Millisecond)
	wantReserved(t, h, urlC, "q3", 2*time.Minute+time.Second)
	// A reserved audit keeps the slack too, and starts no sooner than its
	// reservation; its reservation stays where it was.
	mustComplete(t, h, mustAdmit(t, h, urlA, "q1"), "r1", false)
	h.clock.Set(time.Minute - time.Millisecond)
	wantMoved(t, h, urlB, "q2", 501*time.Millisecond, "1/1m", time.Minute+500*time.Millisecond)
	h.clock.Set(time.Minute)
	wantMoved(t, h, urlB, "q2", 500*time.Millisecond, "1/1m", time.Minute+500*time.Millisecond)
	h.clock.Set(time.Minute + 500*time.Millisecond)
	mustAdmit(t, h, urlB, "q2")
	// An audit without a reservation keeps the windows alone (here: a
	// minute after q3's start, no slack).
	h.clock.Set(3*time.Minute + time.Second - time.Millisecond)
	wantRefused(t, h, urlA+"?cli", "cli", time.Millisecond, "1/1m")
	h.clock.Set(3*time.Minute + time.Second)
	mustAdmit(t, h, urlA+"?cli", "cli")
}

func testAdmitHonoursReservations(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	wantReserved(t, h, urlA, "q1", 0)
	wantReserved(t, h, urlB, "q2", time.Minute)
	wantReserved(t, h, urlC, "q3", 2*time.Minute)
	// An audit without a reservation (the command line) waits for the
	// first start no reservation was promised: 3m.
	wantRefused(t, h, urlA+"?cli", "cli", 3*time.Minute, "1/1m")
	l1 := mustAdmit(t, h, urlA, "q1")
	h.clock.Set(3 * time.Second)
	mustComplete(t, h, l1, "r1", false)
	// q2 early: refused until the minute is over, its reservation stays.
	wantMoved(t, h, urlB, "q2", 57*time.Second, "1/1m", time.Minute)
	// q2 five seconds late still runs: it is first in line.
	h.clock.Set(65 * time.Second)
	l2 := mustAdmit(t, h, urlB, "q2")
	mustComplete(t, h, l2, "r2", false)
	// q3 at its time: the late start of q2 moves it back by 5s.
	h.clock.Set(2 * time.Minute)
	wantMoved(t, h, urlC, "q3", 5*time.Second, "1/1m", 2*time.Minute+5*time.Second)
	h.clock.Set(2*time.Minute + 5*time.Second)
	mustComplete(t, h, mustAdmit(t, h, urlC, "q3"), "r3", false)
	// A new reservation counts every real start.
	wantReserved(t, h, urlA+"?4", "q4", 3*time.Minute+5*time.Second)
	if err := h.Unreserve(bg, urlA+"?4", "q4"); err != nil {
		t.Fatalf("Unreserve: %v", err)
	}
	h.clock.Set(3*time.Minute + 5*time.Second)
	mustAdmit(t, h, urlA+"?cli", "cli")
}

func testReserveStates(t *testing.T, newStore factory) {
	l := Defaults()
	l.Windows = []Window{{N: 100, Per: time.Minute}}
	h := newStore(t, l, slowPoll)
	l1 := mustAdmit(t, h, urlA, "id1")
	h.clock.Set(10 * time.Second)
	a, err := h.Reserve(bg, urlA, "q1", reserveWithin)
	if err != nil || a.Decision != InFlight || a.RunningID != "id1" {
		t.Fatalf("Reserve of the running URL = %+v, %v; want in flight of id1", a, err)
	}
	// The running audit is expected to end at 30s: that is the start.
	wantReserved(t, h, urlB, "q2", 30*time.Second)
	h.clock.Set(20 * time.Second)
	mustComplete(t, h, l1, "report-a", false)
	h.clock.Set(25 * time.Second)
	a, err = h.Reserve(bg, urlA, "q3", reserveWithin)
	if err != nil || a.Decision != Cached {
		t.Fatalf("Reserve of the cached URL = %+v, %v; want cached", a, err)
	}
	wantEntry(t, "reserved entry", a.Entry, "id1", "report-a", 5*time.Second, false)
	// Once the host is free the next start is now.
	wantReserved(t, h, urlC, "q4", 25*time.Second)
}

func testReserveLapses(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	wantReserved(t, h, urlA, "q1", time.Duration(0))
	// A reservation whose time passed counts as starting now while it
	// lives, for the next reservation.
	h.clock.Set(time.Minute)
	wantReserved(t, h, urlB, "q2", 2*time.Minute)
	if err := h.Unreserve(bg, urlB, "q2"); err != nil {
		t.Fatalf("Unreserve: %v", err)
	}
	// Until ReserveGrace past its time.
	h.clock.Set(ReserveGrace - time.Millisecond)
	wantReserved(t, h, urlB, "q2", ReserveGrace-time.Millisecond+time.Minute)
	h.clock.Set(ReserveGrace)
	wantReserved(t, h, urlB, "q2", ReserveGrace)
	// The late audit then waits for the start promised to q2, as any
	// audit without a reservation would.
	wantRefused(t, h, urlA, "q1", time.Minute, "1/1m")
	h.clock.Set(ReserveGrace + time.Minute)
	mustAdmit(t, h, urlA, "q1")
}

func testLeaseMin(t *testing.T, newStore factory) {
	l := Defaults()
	l.LeaseTTL = 30 * time.Second
	l.LeaseMin = 90 * time.Second
	l.Windows = []Window{{N: 100, Per: time.Minute}}
	h := newStore(t, l, slowPoll)
	lease := mustAdmit(t, h, urlA, "id1")
	// A renewal at 10s would end the lease at 40s: it keeps 90s.
	h.clock.Set(10 * time.Second)
	if err := h.Renew(bg, lease); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	h.clock.Set(90*time.Second - time.Millisecond)
	wantRefused(t, h, urlB, "id2", time.Millisecond, ReasonConcurrency)
	// Renewed at 80s: it lives until 110s.
	h.clock.Set(80 * time.Second)
	if err := h.Renew(bg, lease); err != nil {
		t.Fatalf("Renew at 80s: %v", err)
	}
	h.clock.Set(110*time.Second - time.Millisecond)
	wantRefused(t, h, urlB, "id2", time.Millisecond, ReasonConcurrency)
	h.clock.Set(110 * time.Second)
	mustAdmit(t, h, urlB, "id2")
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
	wantRefused(t, h, urlB, "id2", time.Millisecond, ReasonConcurrency)
	h.clock.Set(120 * time.Second)
	if err := h.Renew(bg, l); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Renew at the expiry: %v, want ErrLeaseLost", err)
	}
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
	sameStart := got.StartsAt.Equal(want.StartsAt)
	got.StartsAt, want.StartsAt = time.Time{}, time.Time{}
	if err != nil || ok != found || got != want || !same || !sameStart {
		tb.Fatalf("Progress(%s) = %+v, %v, %v; want %+v, %v", id, got, ok, err, want, found)
	}
}
