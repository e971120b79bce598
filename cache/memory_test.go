package cache

import (
	"testing"
	"time"
)

func newMemoryHarness(t *testing.T, l Limits, poll time.Duration) harness {
	t.Helper()
	clock := newTestClock()
	m, err := NewMemoryStore(l, clock.Now)
	if err != nil {
		t.Fatalf("NewMemoryStore: %v", err)
	}
	m.poll = poll
	t.Cleanup(func() { _ = m.Close() })
	return harness{
		Store:     m,
		clock:     clock,
		reportTTL: l.ReportTTL,
		ttls:      func(testing.TB) map[string]time.Duration { return m.ttls() },
		waiters: func(testing.TB, string, string) int {
			m.mu.Lock()
			defer m.mu.Unlock()
			return m.waiting
		},
		// A memory store's state lives in its process: opening it again is
		// the same store under other limits.
		reopen: func(_ *testing.T, l Limits) Store {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.limits = l
			return m
		},
	}
}

func TestMemoryStoreContract(t *testing.T) {
	t.Parallel()
	runStoreContract(t, newMemoryHarness)
}

// TestMemoryStoreForgets checks that an idle memory store drops everything
// once every TTL has passed, so a long-running process does not grow.
func TestMemoryStoreForgets(t *testing.T) {
	t.Parallel()
	h := newMemoryHarness(t, Defaults(), slowPoll)
	run(t, h, urlA, "id1")
	l := mustAdmit(t, h, urlOther, "id2")
	mustComplete(t, h, l, "failed", true)
	h.clock.Set(time.Minute)
	mustAdmit(t, h, urlB, "id3") // crashes: never completed
	if n := len(h.ttls(t)); n == 0 {
		t.Fatal("store is empty right after a run")
	}
	h.clock.Set(31 * 24 * time.Hour)
	if got := h.ttls(t); len(got) != 0 {
		t.Fatalf("after every TTL passed the store still holds %v", got)
	}
	m := h.Store.(*MemoryStore)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.hosts)+len(m.results)+len(m.reports)+len(m.fins) != 0 {
		t.Fatalf("maps not empty: %d hosts, %d results, %d reports, %d fins",
			len(m.hosts), len(m.results), len(m.reports), len(m.fins))
	}
}

func TestNewMemoryStoreValidates(t *testing.T) {
	t.Parallel()
	l := Defaults()
	l.Concurrency = 0
	if _, err := NewMemoryStore(l, nil); err == nil {
		t.Fatal("NewMemoryStore accepted concurrency 0")
	}
}
