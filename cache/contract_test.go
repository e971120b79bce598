package cache

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// harness is one store under test with the clock it runs on.
type harness struct {
	Store
	clock *testClock
	// reportTTL bounds the hot state's copy of a report (key report:<id>);
	// 0 when the hot state keeps none (the archive has them all).
	reportTTL time.Duration
	// ttls lists every stored key (without prefix) with its remaining TTL;
	// -1 marks a key that never expires.
	ttls func(tb testing.TB) map[string]time.Duration
	// waiters reports how many Wait calls are waiting on id.
	waiters func(tb testing.TB, host, id string) int
	// reopen opens the store again on the same state and clock, enforcing
	// l: a restart with other flags, or another process on the same data.
	reopen func(t *testing.T, l Limits) Store
}

// factory makes a fresh, empty store enforcing l, whose Wait polls every poll.
type factory func(t *testing.T, l Limits, poll time.Duration) harness

const (
	urlA     = "https://shop.example/a"
	urlB     = "https://shop.example/b"
	urlC     = "https://shop.example/c"
	urlOther = "https://other.example/"
)

// slowPoll makes Wait rely on completion messages; fastPoll on polling.
const (
	slowPoll = time.Hour
	fastPoll = 10 * time.Millisecond
)

// runStoreContract is the one suite every Store implementation passes. All
// times are on the injected clock, so every count and wait is exact.
func runStoreContract(t *testing.T, newStore factory) {
	cases := []struct {
		name string
		run  func(t *testing.T, newStore factory)
	}{
		{"second admit while in flight", testInFlight},
		{"different URL on busy host refused not joined", testBusyHostRefused},
		{"window boundary to the millisecond", testWindowBoundary},
		{"windows count from the site's first contact", testContacted},
		{"N+1th start in window refused", testWindowFull},
		{"both windows violated gives the larger wait", testLargerWait},
		{"concurrency wait beats a shorter window", testConcurrencyWait},
		{"shorter window can give the longer wait", testShortWindowLonger},
		{"concurrency above one", testConcurrencyTwo},
		{"refusals do not extend windows", testRefusalsFree},
		{"failed audits still count", testFailedCounts},
		{"cache hit bypasses an exhausted limiter", testCacheBypass},
		{"cache TTL from completion not refreshed by reads", testCacheTTL},
		{"the reader's cache TTL wins over the writer's", testReaderTTL},
		{"result appearing between lookup and admit", testResultBetween},
		{"join receives the result", testJoinResult},
		{"join receives a failure", testJoinFailure},
		{"join of a crashed audit is abandoned", testJoinAbandoned},
		{"crashed holder lease expires and its late release frees nothing", testCrashedHolder},
		{"token retry is idempotent", testIdempotent},
		{"hosts are independent", testHostsIndependent},
		{"frozen clock many goroutines one host", testFrozenManyURLs},
		{"frozen clock many goroutines one URL", testFrozenOneURL},
		{"reports by id and their retention", testReports},
		{"a cached answer gets an id of its own", testRefer},
		{"large reports round trip and the cap", testLargeReports},
		{"keys carry TTLs", testKeyTTLs},
		{"bad input", testBadInput},
	}
	cases = append(cases, leaseCases...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newStore)
		})
	}
}

// --- helpers ---

var bg = context.Background()

func mustAdmit(tb testing.TB, s Store, url, id string) Lease {
	tb.Helper()
	a, err := s.Admit(bg, url, id)
	if err != nil {
		tb.Fatalf("Admit(%s, %s): %v", url, id, err)
	}
	if a.Decision != Admitted {
		tb.Fatalf("Admit(%s, %s) = %s %+v, want admitted", url, id, a.Decision, a)
	}
	want := Lease{Host: mustHost(tb, url), URL: url, ID: id}
	if a.Lease != want {
		tb.Fatalf("Admit(%s, %s) lease = %+v, want %+v", url, id, a.Lease, want)
	}
	return a.Lease
}

func mustHost(tb testing.TB, url string) string {
	tb.Helper()
	tg, err := parseTarget(url)
	if err != nil {
		tb.Fatal(err)
	}
	return tg.host
}

func wantRefused(tb testing.TB, s Store, url, id string, wait time.Duration, reason string) {
	tb.Helper()
	a, err := s.Admit(bg, url, id)
	if err != nil {
		tb.Fatalf("Admit(%s, %s): %v", url, id, err)
	}
	if a.Decision != Refused || a.RetryAfter != wait || a.Reason != reason {
		tb.Fatalf("Admit(%s, %s) = %s retry %v reason %q, want refused retry %v reason %q",
			url, id, a.Decision, a.RetryAfter, a.Reason, wait, reason)
	}
}

func mustComplete(tb testing.TB, s Store, l Lease, report string, failed bool) {
	tb.Helper()
	if err := s.Complete(bg, l, Outcome{Report: []byte(report), Failed: failed}); err != nil {
		tb.Fatalf("Complete(%s): %v", l.ID, err)
	}
}

// run admits url and completes it at once with report "report-<id>".
func run(tb testing.TB, s Store, url, id string) {
	tb.Helper()
	mustComplete(tb, s, mustAdmit(tb, s, url, id), "report-"+id, false)
}

func wantEntry(tb testing.TB, what string, got Entry, id, report string, age time.Duration, failed bool) {
	tb.Helper()
	if got.ID != id || string(got.Report) != report || got.Age != age || got.Failed != failed {
		tb.Fatalf("%s = {ID %s Report %q Age %v Failed %v}, want {ID %s Report %q Age %v Failed %v}",
			what, got.ID, got.Report, got.Age, got.Failed, id, report, age, failed)
	}
}

func wantMiss(tb testing.TB, s Store, url string) {
	tb.Helper()
	e, ok, err := s.Lookup(bg, url)
	if err != nil || ok {
		tb.Fatalf("Lookup(%s) = %+v, %v, %v; want a miss", url, e, ok, err)
	}
}

func wantHit(tb testing.TB, s Store, url, id, report string, age time.Duration) {
	tb.Helper()
	e, ok, err := s.Lookup(bg, url)
	if err != nil || !ok {
		tb.Fatalf("Lookup(%s) = %v, %v; want a hit", url, ok, err)
	}
	wantEntry(tb, "Lookup("+url+")", e, id, report, age, false)
}

func t0Plus(t time.Time) time.Duration { return t.Sub(t0) }

// waitAsync starts Wait and returns where its answer arrives.
func waitAsync(s Store, url, id string) <-chan waitResult {
	ch := make(chan waitResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		e, err := s.Wait(ctx, url, id)
		ch <- waitResult{e, err}
	}()
	return ch
}

type waitResult struct {
	e   Entry
	err error
}

// untilWaiting blocks until a Wait on id is registered, so the completion
// that follows must wake it rather than be found by its first check.
func untilWaiting(tb testing.TB, h harness, url, id string) {
	tb.Helper()
	host := mustHost(tb, url)
	deadline := time.Now().Add(10 * time.Second)
	for h.waiters(tb, host, id) < 1 {
		if time.Now().After(deadline) {
			tb.Fatalf("no Wait on %s registered", id)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func receive(tb testing.TB, ch <-chan waitResult) waitResult {
	tb.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		tb.Fatal("Wait never returned")
	}
	return waitResult{}
}

// --- cases ---

func testInFlight(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	mustAdmit(t, h, urlA, "id1")
	a, err := h.Admit(bg, urlA, "id2")
	if err != nil || a.Decision != InFlight || a.RunningID != "id1" {
		t.Fatalf("second Admit of the same URL = %+v, %v; want in flight of id1", a, err)
	}
	h.clock.Advance(30 * time.Second)
	a, err = h.Admit(bg, urlA, "id3")
	if err != nil || a.Decision != InFlight || a.RunningID != "id1" {
		t.Fatalf("Admit 30s later = %+v, %v; want in flight of id1", a, err)
	}
}

func testBusyHostRefused(t *testing.T, newStore factory) {
	l := Defaults()
	l.Windows = []Window{{N: 100, Per: time.Minute}}
	h := newStore(t, l, slowPoll)
	mustAdmit(t, h, urlA, "id1")
	// The running audit is expected to end at +30s (Typical), its lease at
	// +90s: the refusal names the expected end.
	wantRefused(t, h, urlB, "id2", 30*time.Second, ReasonConcurrency)
	h.clock.Set(10 * time.Second)
	wantRefused(t, h, urlB, "id2", 20*time.Second, ReasonConcurrency)
	// Past its expected end it is asked about again soon, never past the
	// lease.
	h.clock.Set(31 * time.Second)
	wantRefused(t, h, urlB, "id2", 5*time.Second, ReasonConcurrency)
	h.clock.Set(88 * time.Second)
	wantRefused(t, h, urlB, "id2", 2*time.Second, ReasonConcurrency)
}

func testWindowBoundary(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	h.clock.Set(time.Second)
	mustComplete(t, h, l, "r", false)
	h.clock.Set(time.Minute - time.Millisecond)
	wantRefused(t, h, urlB, "id2", time.Millisecond, "1/1m")
	h.clock.Set(time.Minute)
	mustAdmit(t, h, urlB, "id2")
}

// testContacted: an audit whose first request reached the site 800 ms
// after its admission moves its start by that much, once, however often
// Complete is retried, so the next start keeps a whole window after what
// the site saw.
func testContacted(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	h.clock.Set(time.Second)
	for range 2 {
		if err := h.Complete(bg, l, Outcome{Report: []byte("r"), Contacted: 800 * time.Millisecond}); err != nil {
			t.Fatalf("Complete: %v", err)
		}
	}
	h.clock.Set(time.Minute)
	wantRefused(t, h, urlB, "id2", 800*time.Millisecond, "1/1m")
	h.clock.Set(time.Minute + 800*time.Millisecond)
	mustAdmit(t, h, urlB, "id2")
}

// fiveStarts runs audits at 0, 1, 2, 3 and 4 minutes, each completed at once.
func fiveStarts(t *testing.T, h harness) {
	t.Helper()
	for i, u := range []string{urlA, urlB, urlC, urlA + "?4", urlA + "?5"} {
		h.clock.Set(time.Duration(i) * time.Minute)
		run(t, h, u, fmt.Sprintf("s%d", i))
	}
}

func testWindowFull(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	fiveStarts(t, h)
	h.clock.Set(5 * time.Minute)
	wantRefused(t, h, urlB+"?6", "id6", 55*time.Minute, "5/1h")
	h.clock.Set(time.Hour - time.Millisecond)
	wantRefused(t, h, urlB+"?6", "id6", time.Millisecond, "5/1h")
	h.clock.Set(time.Hour)
	mustAdmit(t, h, urlB+"?6", "id6")
}

func testLargerWait(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	fiveStarts(t, h)
	h.clock.Set(4*time.Minute + 10*time.Second)
	// 1/1m frees at 5m (50s), 5/1h at 60m (55m50s): the larger wins.
	wantRefused(t, h, urlB+"?6", "id6", 55*time.Minute+50*time.Second, "5/1h")
}

func testConcurrencyWait(t *testing.T, newStore factory) {
	l := Defaults()
	l.Typical = 80 * time.Second
	h := newStore(t, l, slowPoll)
	mustAdmit(t, h, urlA, "id1")
	h.clock.Set(50 * time.Second)
	// Window frees in 10s, the running audit is expected to end in 30s.
	wantRefused(t, h, urlB, "id2", 30*time.Second, ReasonConcurrency)
	// With the default Typical (30s) it is overdue: ask again in 5s, and
	// the window's 10s is the longer wait.
	h2 := newStore(t, Defaults(), slowPoll)
	mustAdmit(t, h2, urlA, "id1")
	h2.clock.Set(50 * time.Second)
	wantRefused(t, h2, urlB, "id2", 10*time.Second, "1/1m")
}

func testShortWindowLonger(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	for i, at := range []time.Duration{0, 56 * time.Minute, 57 * time.Minute, 58 * time.Minute, 59*time.Minute + 30*time.Second} {
		h.clock.Set(at)
		run(t, h, fmt.Sprintf("%s?%d", urlA, i), fmt.Sprintf("s%d", i))
	}
	h.clock.Set(59*time.Minute + 40*time.Second)
	// 5/1h frees when the start at 0 leaves (20s); 1/1m when the one at
	// 59m30s leaves (50s).
	wantRefused(t, h, urlB, "id6", 50*time.Second, "1/1m")
}

func testConcurrencyTwo(t *testing.T, newStore factory) {
	l := Defaults()
	l.Concurrency = 2
	l.Windows = []Window{{N: 10, Per: time.Minute}}
	h := newStore(t, l, slowPoll)
	mustAdmit(t, h, urlA, "id1")
	h.clock.Set(time.Second)
	la := mustAdmit(t, h, urlB, "id2")
	h.clock.Set(2 * time.Second)
	// The first running audit (started at 0) is expected to end at 30s.
	wantRefused(t, h, urlC, "id3", 28*time.Second, ReasonConcurrency)
	mustComplete(t, h, la, "r", false)
	mustAdmit(t, h, urlC, "id3")
}

func testRefusalsFree(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	h.clock.Set(time.Second)
	mustComplete(t, h, l, "r", false)
	for _, at := range []time.Duration{30 * time.Second, 59 * time.Second, time.Minute - time.Millisecond} {
		h.clock.Set(at)
		wantRefused(t, h, urlB, fmt.Sprintf("r%d", at), time.Minute-at, "1/1m")
	}
	h.clock.Set(time.Minute)
	mustAdmit(t, h, urlB, "id2")
}

func testFailedCounts(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	h.clock.Set(5 * time.Second)
	mustComplete(t, h, l, "failure-report", true)
	wantMiss(t, h, urlA)
	e, err := h.Report(bg, "id1")
	if err != nil {
		t.Fatalf("Report(id1): %v", err)
	}
	wantEntry(t, "Report(id1)", e, "id1", "failure-report", 0, true)
	h.clock.Set(30 * time.Second)
	// Not cached, and the failed start still fills the 1/1m window.
	wantRefused(t, h, urlA, "id2", 30*time.Second, "1/1m")
}

func testCacheBypass(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	h.clock.Set(2 * time.Second)
	mustComplete(t, h, l, "report-a", false)
	h.clock.Set(10 * time.Second)
	wantRefused(t, h, urlB, "id2", 50*time.Second, "1/1m")
	wantHit(t, h, urlA, "id1", "report-a", 8*time.Second)
	for i := range 3 {
		a, err := h.Admit(bg, urlA, fmt.Sprintf("c%d", i))
		if err != nil || a.Decision != Cached {
			t.Fatalf("Admit of a cached URL = %+v, %v; want cached", a, err)
		}
		wantEntry(t, "Admit cached entry", a.Entry, "id1", "report-a", 8*time.Second, false)
	}
	// The cached answers charged nothing: at 60s the window is free again.
	h.clock.Set(time.Minute)
	mustAdmit(t, h, urlB, "id2")
}

func testCacheTTL(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	done := 2 * time.Second
	h.clock.Set(done)
	mustComplete(t, h, l, "report-a", false)
	for _, age := range []time.Duration{0, 14 * time.Minute, 15*time.Minute - time.Millisecond} {
		h.clock.Set(done + age)
		wantHit(t, h, urlA, "id1", "report-a", age)
	}
	h.clock.Set(done + 15*time.Minute)
	wantMiss(t, h, urlA)
	a, err := h.Admit(bg, urlA, "id2")
	if err != nil || a.Decision != Admitted {
		t.Fatalf("Admit after the cache expired = %+v, %v; want admitted", a, err)
	}
}

// testReaderTTL writes a result under the default 15-minute TTL, then
// reads it through the store opened again with a 1-minute TTL: fresh to
// that reader only while younger than a minute, whatever the entry's own
// expiry says. Every way in answers alike: Lookup, Admit and Reserve.
func testReaderTTL(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	done := 2 * time.Second
	h.clock.Set(done)
	mustComplete(t, h, l, "report-a", false)
	short := Defaults()
	short.CacheTTL = time.Minute
	r := h.reopen(t, short)
	h.clock.Set(done + time.Minute - time.Millisecond)
	wantHit(t, r, urlA, "id1", "report-a", time.Minute-time.Millisecond)
	if a, err := r.Admit(bg, urlA, "id2"); err != nil || a.Decision != Cached {
		t.Fatalf("Admit younger than the reader's TTL = %+v, %v; want cached", a, err)
	}
	h.clock.Set(done + time.Minute)
	wantMiss(t, r, urlA)
	if a, err := r.Reserve(bg, urlA, "id3", time.Minute); err != nil || a.Decision != Reserved {
		t.Fatalf("Reserve once older than the reader's TTL = %+v, %v; want reserved", a, err)
	}
	if a, err := r.Admit(bg, urlA, "id3"); err != nil || a.Decision != Admitted {
		t.Fatalf("Admit once older than the reader's TTL = %+v, %v; want admitted", a, err)
	}
}

func testResultBetween(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	wantMiss(t, h, urlA)
	run(t, h, urlA, "other") // another process audits the URL meanwhile
	a, err := h.Admit(bg, urlA, "mine")
	if err != nil || a.Decision != Cached {
		t.Fatalf("Admit = %+v, %v; want cached", a, err)
	}
	wantEntry(t, "Admit cached entry", a.Entry, "other", "report-other", 0, false)
}

func testJoinResult(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	a, err := h.Admit(bg, urlA, "id2")
	if err != nil || a.Decision != InFlight {
		t.Fatalf("Admit = %+v, %v; want in flight", a, err)
	}
	got := waitAsync(h, urlA, a.RunningID)
	untilWaiting(t, h, urlA, a.RunningID)
	h.clock.Set(3 * time.Second)
	mustComplete(t, h, l, "report-a", false)
	r := receive(t, got)
	if r.err != nil {
		t.Fatalf("Wait: %v", r.err)
	}
	wantEntry(t, "Wait", r.e, "id1", "report-a", 0, false)
	if d := t0Plus(r.e.CompletedAt); d != 3*time.Second {
		t.Fatalf("Wait entry completed at t0+%v, want t0+3s", d)
	}
}

func testJoinFailure(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "id1")
	got := waitAsync(h, urlA, "id1")
	untilWaiting(t, h, urlA, "id1")
	mustComplete(t, h, l, "timeout-report", true)
	r := receive(t, got)
	if r.err != nil {
		t.Fatalf("Wait: %v", r.err)
	}
	wantEntry(t, "Wait", r.e, "id1", "timeout-report", 0, true)
	// A join after the fact receives the same failure.
	e, err := h.Wait(bg, urlA, "id1")
	if err != nil || !e.Failed || string(e.Report) != "timeout-report" {
		t.Fatalf("late Wait = %+v, %v; want the failure", e, err)
	}
}

func testJoinAbandoned(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), fastPoll)
	mustAdmit(t, h, urlA, "id1")
	got := waitAsync(h, urlA, "id1")
	untilWaiting(t, h, urlA, "id1")
	h.clock.Set(90 * time.Second) // the holder crashed; its lease ends
	mustAdmit(t, h, urlA, "id2")
	r := receive(t, got)
	if !errors.Is(r.err, ErrAbandoned) {
		t.Fatalf("Wait on a crashed audit = %+v, %v; want ErrAbandoned", r.e, r.err)
	}
	if _, err := h.Wait(bg, urlA, "never-started"); !errors.Is(err, ErrAbandoned) {
		t.Fatalf("Wait on an unknown id: %v, want ErrAbandoned", err)
	}
}

func testCrashedHolder(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	old := mustAdmit(t, h, urlA, "old")
	h.clock.Set(90*time.Second - time.Millisecond)
	wantRefused(t, h, urlB, "new", time.Millisecond, ReasonConcurrency)
	h.clock.Set(90 * time.Second)
	newer := mustAdmit(t, h, urlB, "new")
	err := h.Complete(bg, old, Outcome{Report: []byte("late")})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("late Complete: %v, want ErrLeaseLost", err)
	}
	// The newer audit still holds the host, and its start the minute.
	wantRefused(t, h, urlC, "third", time.Minute, "1/1m")
	// The late report is kept by id but not cached.
	if e, err := h.Report(bg, "old"); err != nil || string(e.Report) != "late" {
		t.Fatalf("Report(old) = %+v, %v; want the late report", e, err)
	}
	wantMiss(t, h, urlA)
	mustComplete(t, h, newer, "fresh", false)
	wantHit(t, h, urlB, "new", "fresh", 0)
}

func testIdempotent(t *testing.T, newStore factory) {
	l := Defaults()
	l.Windows = []Window{{N: 2, Per: time.Hour}}
	h := newStore(t, l, slowPoll)
	first := mustAdmit(t, h, urlA, "id1")
	if again := mustAdmit(t, h, urlA, "id1"); again != first {
		t.Fatalf("retried Admit lease %+v, want %+v", again, first)
	}
	mustComplete(t, h, first, "r1", false)
	mustComplete(t, h, first, "r1", false) // the retry succeeds too
	h.clock.Set(time.Millisecond)
	second := mustAdmit(t, h, urlB, "id2")  // the retried Admit counted once
	mustComplete(t, h, first, "r1", false)  // a late retry of id1 frees nothing:
	mustComplete(t, h, second, "r2", false) // id2 still held its lease
	h.clock.Set(2 * time.Millisecond)
	wantRefused(t, h, urlC, "id3", time.Hour-2*time.Millisecond, "2/1h")
}

func testHostsIndependent(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	mustAdmit(t, h, urlA, "id1")
	for _, u := range []string{urlOther, "https://www.shop.example/a", "http://shop.example.org/"} {
		mustAdmit(t, h, u, "other-"+u)
	}
	// The limiter key is the hostname: port, scheme and case do not matter.
	for _, u := range []string{"https://shop.example:8443/a", "http://shop.example/x", "https://SHOP.example./y"} {
		wantRefused(t, h, u, "same-"+u, time.Minute, "1/1m")
	}
}

func testFrozenManyURLs(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	counts := race(t, 32, func(i int) (Admission, error) {
		return h.Admit(bg, fmt.Sprintf("%s?%d", urlA, i), fmt.Sprintf("g%d", i))
	})
	if counts[Admitted] != 1 || counts[Refused] != 31 {
		t.Fatalf("32 admits on one host at one instant: %v, want 1 admitted and 31 refused", counts)
	}
}

func testFrozenOneURL(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	var mu sync.Mutex
	var winner string
	running := map[string]int{}
	counts := race(t, 32, func(i int) (Admission, error) {
		id := fmt.Sprintf("g%d", i)
		a, err := h.Admit(bg, urlA, id)
		mu.Lock()
		defer mu.Unlock()
		switch a.Decision {
		case Admitted:
			winner = id
		case InFlight:
			running[a.RunningID]++
		}
		return a, err
	})
	if counts[Admitted] != 1 || counts[InFlight] != 31 || running[winner] != 31 {
		t.Fatalf("32 admits of one URL at one instant: %v, joined %v, winner %s; want 1 admitted, 31 joining it",
			counts, running, winner)
	}
}

// race runs n admissions at once and counts their decisions.
func race(t *testing.T, n int, admit func(i int) (Admission, error)) map[Decision]int {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[Decision]int{}
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			a, err := admit(i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("admit %d: %v", i, err)
				return
			}
			counts[a.Decision]++
		})
	}
	close(start)
	wg.Wait()
	return counts
}

func testReports(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	if _, err := h.Report(bg, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Report of an unknown id: %v, want ErrNotFound", err)
	}
	l := mustAdmit(t, h, urlA, "id1")
	h.clock.Set(time.Second)
	mustComplete(t, h, l, "report-a", false)
	retention := 30 * 24 * time.Hour
	h.clock.Set(time.Second + retention - time.Millisecond)
	e, err := h.Report(bg, "id1")
	if err != nil {
		t.Fatalf("Report before retention ends: %v", err)
	}
	wantEntry(t, "Report", e, "id1", "report-a", retention-time.Millisecond, false)
	h.clock.Set(time.Second + retention)
	if _, err := h.Report(bg, "id1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Report after retention: %v, want ErrNotFound", err)
	}
}

func testRefer(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	l := mustAdmit(t, h, urlA, "first")
	mustComplete(t, h, l, "report-a", false)
	h.clock.Set(90 * time.Second)
	e, ok, err := h.Lookup(bg, urlA)
	if err != nil || !ok {
		t.Fatalf("Lookup: ok %v, err %v", ok, err)
	}
	if err := h.Refer(bg, "second", e); err != nil {
		t.Fatalf("Refer: %v", err)
	}
	h.clock.Set(10 * time.Minute)
	got, err := h.Report(bg, "second")
	if err != nil {
		t.Fatalf("Report of the reference: %v", err)
	}
	wantEntry(t, "Report(second)", got, "second", "report-a", 90*time.Second, false)
	if !got.Referred {
		t.Errorf("Report(second).Referred = false, want true")
	}
	if orig, err := h.Report(bg, "first"); err != nil || orig.Referred || orig.ID != "first" {
		t.Errorf("Report(first) = %+v, %v; want the report itself", orig, err)
	}
	// A reference counts against nothing: the host's minute window holds
	// the one start it had.
	h.clock.Set(11 * time.Minute)
	mustAdmit(t, h, urlB, "third")
	for _, bad := range []struct {
		name, id string
		e        Entry
	}{
		{"its own id", "first", e},
		{"an empty id", "", e},
		{"an id with a space", "a b", e},
		{"an entry without an id", "fourth", Entry{CompletedAt: e.CompletedAt}},
	} {
		if err := h.Refer(bg, bad.id, bad.e); err == nil {
			t.Errorf("Refer with %s: no error", bad.name)
		}
	}
	// The reference expires with the report it points at.
	retention := 30 * 24 * time.Hour
	h.clock.Set(retention - time.Millisecond)
	if _, err := h.Report(bg, "second"); err != nil {
		t.Errorf("Report(second) just before the report expires: %v", err)
	}
	h.clock.Set(retention)
	if _, err := h.Report(bg, "second"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Report(second) once the report expired: %v, want ErrNotFound", err)
	}
}

func testLargeReports(t *testing.T, newStore factory) {
	l := Defaults()
	l.MaxReportBytes = 64 << 10
	l.Windows = []Window{{N: 100, Per: time.Minute}}
	h := newStore(t, l, slowPoll)
	// 1 MiB of repetitive JSON compresses far below the 64 KiB cap.
	big := bytes.Repeat([]byte(`{"field":"title","plain":"Shop","render":"Shop – Home"},`), 1<<20/56)
	run(t, h, urlA, "warm")
	lb := mustAdmit(t, h, urlB, "big")
	if err := h.Complete(bg, lb, Outcome{Report: big}); err != nil {
		t.Fatalf("Complete with a large compressible report: %v", err)
	}
	e, ok, err := h.Lookup(bg, urlB)
	if err != nil || !ok || !bytes.Equal(e.Report, big) {
		t.Fatalf("Lookup of the large report: ok %v err %v, %d bytes back of %d", ok, err, len(e.Report), len(big))
	}
	noise := make([]byte, 128<<10)
	_, _ = rand.Read(noise)
	lc := mustAdmit(t, h, urlC, "noise")
	err = h.Complete(bg, lc, Outcome{Report: noise})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Complete with 128 KiB of noise: %v, want ErrTooLarge", err)
	}
	wantRefused(t, h, urlA+"?x", "x", 30*time.Second, ReasonConcurrency) // still held
	mustComplete(t, h, lc, "too large", true)
	if e, err := h.Report(bg, "noise"); err != nil || !e.Failed {
		t.Fatalf("Report(noise) = %+v, %v; want the failure", e, err)
	}
}

func testKeyTTLs(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	shop, other := "{shop.example}:", "{other.example}:"
	ta, _ := parseTarget(urlA)
	tgB, _ := parseTarget(urlB)
	run(t, h, urlA, "id1")
	lo := mustAdmit(t, h, urlOther, "id3")
	mustComplete(t, h, lo, "failed", true)
	h.clock.Set(time.Minute)
	mustAdmit(t, h, urlB, "id2") // left running
	wantRefused(t, h, urlC, "id4", time.Minute, "1/1m")
	bounds := map[string]time.Duration{
		shop + "lease":           90 * time.Second,
		shop + "lstart":          90 * time.Second,
		shop + "starts":          time.Hour,
		shop + "run:" + tgB.hash: 90 * time.Second,
		shop + "res:" + ta.hash:  15 * time.Minute,
		shop + "fin:id1":         90 * time.Second,
		other + "starts":         time.Hour,
		other + "fin:id3":        90 * time.Second,
	}
	if h.reportTTL > 0 {
		bounds["report:id1"], bounds["report:id3"] = h.reportTTL, h.reportTTL
	}
	got := h.ttls(t)
	for k, ttl := range got {
		bound, known := bounds[k]
		switch {
		case !known:
			t.Errorf("unexpected key %s (ttl %v)", k, ttl)
		case ttl <= 0:
			t.Errorf("key %s has no expiry (ttl %v)", k, ttl)
		case ttl > bound:
			t.Errorf("key %s ttl %v, want at most %v", k, ttl, bound)
		}
	}
	for k := range bounds {
		if _, ok := got[k]; !ok {
			t.Errorf("key %s missing; have %v", k, strings.Join(keysOf(got), ", "))
		}
	}
}

func keysOf(m map[string]time.Duration) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func testBadInput(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	cases := []struct {
		name string
		call func() error
	}{
		{"admit without host", func() error { _, err := h.Admit(bg, "/relative", "id"); return err }},
		{"admit with empty id", func() error { _, err := h.Admit(bg, urlA, ""); return err }},
		{"admit with a space in the id", func() error { _, err := h.Admit(bg, urlA, "a b"); return err }},
		{"admit with brace host", func() error { _, err := h.Admit(bg, "https://{x}/", "id"); return err }},
		{"reserve without host", func() error { _, err := h.Reserve(bg, "/relative", "id", time.Minute); return err }},
		{"reserve with brace host", func() error { _, err := h.Reserve(bg, "https://{x}/", "id", time.Minute); return err }},
		{"reserve with empty id", func() error { _, err := h.Reserve(bg, urlA, "", time.Minute); return err }},
		{"unreserve without host", func() error { return h.Unreserve(bg, "/relative", "id") }},
		{"lookup of garbage", func() error { _, _, err := h.Lookup(bg, "http://[::1"); return err }},
		{"complete of a zero lease", func() error { return h.Complete(bg, Lease{}, Outcome{}) }},
		{"wait with empty id", func() error { _, err := h.Wait(bg, urlA, ""); return err }},
	}
	for _, tc := range cases {
		err := tc.call()
		if err == nil || errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %v, want an input error", tc.name, err)
		}
	}
}
