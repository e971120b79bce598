package cache

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// sweepEvery is how often, by the store's clock, a MemoryStore drops
// everything that has expired.
const sweepEvery = time.Minute

// defaultPoll is how often Wait re-checks a joined audit when no completion
// wakes it, to notice a crashed holder whose lease expired.
const defaultPoll = time.Second

var _ Store = (*MemoryStore)(nil)

// MemoryStore is a Store for tests and tools within one process: same
// semantics as the others, state (reports included) in memory, time from the
// injected clock. Limits, cache and reports are per process and lost when it
// ends, so no service or CLI run uses it.
type MemoryStore struct {
	limits Limits
	now    func() time.Time
	keys   keyspace
	poll   time.Duration

	mu       sync.Mutex
	hosts    map[string]*memHost
	results  map[string]memResult   // by result key
	reports  map[string]memReport   // by id
	fins     map[string]int64       // fin key → expiry (unix ms)
	progress map[string]memProgress // by id
	changed  chan struct{}          // closed and replaced when a result lands or a lease expires
	swept    int64
	waiting  int // Wait calls in progress
}

type memHost struct {
	leases map[string]memLease // by id
	starts []memStart          // ascending by at
	resv   map[string]memResv  // by URL hash
}

// memResv is a queued audit's reserved start: who reserved it and when.
type memResv struct {
	id string
	at int64
}

type memLease struct {
	t          target
	start, exp int64
}

type memStart struct {
	at int64
	id string
}

type memResult struct {
	id      string
	at, exp int64
	blob    []byte
}

type memProgress struct {
	p   Progress
	exp int64
}

type memReport struct {
	at, exp int64
	failed  bool
	blob    []byte
}

// NewMemoryStore returns an in-process store enforcing l with the clock now
// (time.Now when nil).
func NewMemoryStore(l Limits, now func() time.Time) (*MemoryStore, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("new memory store: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	l.Windows = append([]Window(nil), l.Windows...)
	return &MemoryStore{
		limits:   l,
		now:      now,
		poll:     defaultPoll,
		hosts:    make(map[string]*memHost),
		results:  make(map[string]memResult),
		reports:  make(map[string]memReport),
		fins:     make(map[string]int64),
		progress: make(map[string]memProgress),
		changed:  make(chan struct{}),
	}, nil
}

// Lookup implements Store.
func (m *MemoryStore) Lookup(_ context.Context, url string) (Entry, bool, error) {
	t, err := parseTarget(url)
	if err != nil {
		return Entry{}, false, fmt.Errorf("lookup: %w", err)
	}
	m.mu.Lock()
	now := m.tick()
	r, ok := m.freshResult(t, now)
	m.mu.Unlock()
	if !ok {
		return Entry{}, false, nil
	}
	e, err := r.entry(now)
	if err != nil {
		return Entry{}, false, fmt.Errorf("lookup: %w", err)
	}
	return e, true, nil
}

// Ping implements Store; a memory store always answers.
func (m *MemoryStore) Ping(context.Context) error { return nil }

// Close implements Store; it holds no connections.
func (m *MemoryStore) Close() error { return nil }

// tick reads the clock and sweeps when due; m.mu is held.
func (m *MemoryStore) tick() int64 {
	now := m.now().UnixMilli()
	if now-m.swept >= sweepEvery.Milliseconds() || now < m.swept {
		m.sweep(now)
		m.swept = now
	}
	return now
}

// sweep drops everything expired at now; m.mu is held.
func (m *MemoryStore) sweep(now int64) {
	for k, r := range m.results {
		if now >= r.exp {
			delete(m.results, k)
		}
	}
	for k, r := range m.reports {
		if now >= r.exp {
			delete(m.reports, k)
		}
	}
	for k, exp := range m.fins {
		if now >= exp {
			delete(m.fins, k)
		}
	}
	for k, p := range m.progress {
		if now >= p.exp {
			delete(m.progress, k)
		}
	}
	cut := now - m.limits.longest().Milliseconds()
	for name, h := range m.hosts {
		m.expireLeases(h, now)
		trimStarts(h, cut)
		for k, r := range h.resv {
			if r.at+ReserveGrace.Milliseconds() <= now {
				delete(h.resv, k)
			}
		}
		if len(h.leases) == 0 && len(h.starts) == 0 && len(h.resv) == 0 {
			delete(m.hosts, name)
		}
	}
}

// freshResult returns the cached result of t if still fresh by its own
// expiry and by this store's CacheTTL (the reader's TTL wins); m.mu is held.
func (m *MemoryStore) freshResult(t target, now int64) (memResult, bool) {
	k := m.keys.result(t)
	r, ok := m.results[k]
	if ok && (now >= r.exp || !fresh(r.at, now, m.limits.CacheTTL)) {
		delete(m.results, k)
		ok = false
	}
	return r, ok
}

// host returns the state of a host, creating it; m.mu is held.
func (m *MemoryStore) host(name string) *memHost {
	h := m.hosts[name]
	if h == nil {
		h = &memHost{leases: make(map[string]memLease), resv: make(map[string]memResv)}
		m.hosts[name] = h
	}
	return h
}

// expireLeases clears leases of crashed holders; m.mu is held.
func (m *MemoryStore) expireLeases(h *memHost, now int64) {
	expired := false
	for id, l := range h.leases {
		if l.exp <= now {
			delete(h.leases, id)
			expired = true
		}
	}
	if expired {
		m.broadcast()
	}
}

// broadcast wakes every Wait; m.mu is held.
func (m *MemoryStore) broadcast() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// trimStarts drops starts at or before cut, which no window can see.
func trimStarts(h *memHost, cut int64) {
	i := sort.Search(len(h.starts), func(i int) bool { return h.starts[i].at > cut })
	h.starts = append(h.starts[:0], h.starts[i:]...)
}

func (r memResult) entry(now int64) (Entry, error) {
	body, err := decodeBlob(r.blob)
	if err != nil {
		return Entry{}, err
	}
	return Entry{ID: r.id, Report: body, CompletedAt: time.UnixMilli(r.at), Age: ms(now - r.at)}, nil
}

func (r memReport) entry(id string, now int64) (Entry, error) {
	body, err := decodeBlob(r.blob)
	if err != nil {
		return Entry{}, err
	}
	return Entry{ID: id, Report: body, CompletedAt: time.UnixMilli(r.at), Age: ms(now - r.at), Failed: r.failed}, nil
}

// ms converts unix-millisecond arithmetic to a Duration.
func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// ttls lists every live item under the key name RedisStore would use (without
// prefix) and its remaining lifetime, for the contract suite's expiry check.
func (m *MemoryStore) ttls() map[string]time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
	out := make(map[string]time.Duration)
	put := func(k string, exp int64) {
		if exp > now {
			out[k] = max(out[k], ms(exp-now))
		}
	}
	for name, h := range m.hosts {
		for _, l := range h.leases {
			put(m.keys.lease(name), l.exp)
			put(m.keys.leaseStarts(name), l.exp)
			put(m.keys.run(l.t), l.exp)
		}
		if n := len(h.starts); n > 0 {
			put(m.keys.starts(name), h.starts[n-1].at+m.limits.longest().Milliseconds())
		}
		for _, r := range h.resv {
			put(m.keys.resv(name), r.at+ReserveGrace.Milliseconds())
		}
	}
	for k, r := range m.results {
		put(k, r.exp)
	}
	for id, r := range m.reports {
		put(m.keys.report(id), r.exp)
	}
	for k, exp := range m.fins {
		put(k, exp)
	}
	for id, p := range m.progress {
		put(m.keys.progress(id), p.exp)
	}
	return out
}
