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
}

type memLease struct {
	t   target
	exp int64
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

// Admit implements Store.
func (m *MemoryStore) Admit(_ context.Context, url, id string) (Admission, error) {
	a, err := m.admission(url, id, true)
	if err != nil {
		return Admission{}, fmt.Errorf("admit: %w", err)
	}
	return a, nil
}

// Peek implements Store.
func (m *MemoryStore) Peek(_ context.Context, url string) (Admission, error) {
	a, err := m.admission(url, "", false)
	if err != nil {
		return Admission{}, fmt.Errorf("peek: %w", err)
	}
	return a, nil
}

// admission decides for url: with charge, as Admit (recording the lease and
// the start); without, as Peek.
func (m *MemoryStore) admission(url, id string, charge bool) (Admission, error) {
	t, err := parseTarget(url)
	if err == nil && charge {
		err = checkID(id)
	}
	if err != nil {
		return Admission{}, err
	}
	m.mu.Lock()
	now := m.tick()
	if r, ok := m.freshResult(t, now); ok {
		m.mu.Unlock()
		e, err := r.entry(now)
		if err != nil {
			return Admission{}, err
		}
		return Admission{Decision: Cached, Entry: e}, nil
	}
	a := m.admitHost(m.host(t.host), t, id, now, charge)
	m.mu.Unlock()
	return a, nil
}

// admitHost decides for a URL with no fresh result, recording the
// admission when charge is set; m.mu is held.
func (m *MemoryStore) admitHost(h *memHost, t target, id string, now int64, charge bool) Admission {
	m.expireLeases(h, now)
	for lid, l := range h.leases {
		if l.t.hash != t.hash {
			continue
		}
		if lid == id {
			return Admission{Decision: Admitted, Lease: Lease{Host: t.host, URL: t.url, ID: id}}
		}
		return Admission{Decision: InFlight, RunningID: lid}
	}
	if wait, reason := m.violation(h, now); reason >= 0 {
		return Admission{Decision: Refused, RetryAfter: time.Duration(wait) * time.Millisecond, Reason: m.limits.reason(reason)}
	}
	if !charge {
		return Admission{Decision: Admitted}
	}
	h.leases[id] = memLease{t: t, exp: now + m.limits.LeaseTTL.Milliseconds()}
	i := sort.Search(len(h.starts), func(i int) bool { return h.starts[i].at > now })
	h.starts = append(h.starts, memStart{})
	copy(h.starts[i+1:], h.starts[i:])
	h.starts[i] = memStart{at: now, id: id}
	trimStarts(h, now-m.limits.longest().Milliseconds())
	return Admission{Decision: Admitted, Lease: Lease{Host: t.host, URL: t.url, ID: id}}
}

// Renew implements Store.
func (m *MemoryStore) Renew(_ context.Context, l Lease) error {
	t, err := parseTarget(l.URL)
	if err == nil {
		err = checkID(l.ID)
	}
	if err != nil {
		return fmt.Errorf("renew: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
	h := m.host(t.host)
	m.expireLeases(h, now)
	ml, held := h.leases[l.ID]
	if !held || ml.t.hash != t.hash {
		return fmt.Errorf("renew %s: %w", l.ID, ErrLeaseLost)
	}
	ml.exp = now + m.limits.LeaseTTL.Milliseconds()
	h.leases[l.ID] = ml
	return nil
}

// SetProgress implements Store.
func (m *MemoryStore) SetProgress(_ context.Context, p Progress) error {
	if err := checkProgress(p); err != nil {
		return fmt.Errorf("set progress: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
	p.UpdatedAt = time.UnixMilli(now)
	m.progress[p.ID] = memProgress{p: p, exp: now + ProgressTTL.Milliseconds()}
	return nil
}

// Progress implements Store.
func (m *MemoryStore) Progress(_ context.Context, id string) (Progress, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
	mp, ok := m.progress[id]
	if !ok || now >= mp.exp {
		return Progress{}, false, nil
	}
	return mp.p, true, nil
}

// DropProgress implements Store.
func (m *MemoryStore) DropProgress(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.progress, id)
	return nil
}

// violation returns the longest wait in ms among the violated constraints
// and its index (0 concurrency, i the i-th window), or -1 when none is.
func (m *MemoryStore) violation(h *memHost, now int64) (wait int64, reason int) {
	reason = -1
	if len(h.leases) >= m.limits.Concurrency {
		first := int64(-1)
		for _, l := range h.leases {
			if first < 0 || l.exp < first {
				first = l.exp
			}
		}
		wait, reason = first-now, 0
	}
	for i, w := range m.limits.Windows {
		per := w.Per.Milliseconds()
		lo := sort.Search(len(h.starts), func(j int) bool { return h.starts[j].at > now-per })
		if n := len(h.starts) - lo; n >= w.N {
			if d := h.starts[lo+n-w.N].at + per - now; d > wait {
				wait, reason = d, i+1
			}
		}
	}
	return wait, reason
}

// Wait implements Store.
func (m *MemoryStore) Wait(ctx context.Context, url, id string) (Entry, error) {
	t, err := parseTarget(url)
	if err == nil {
		err = checkID(id)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("wait: %w", err)
	}
	tick := time.NewTicker(m.poll)
	defer tick.Stop()
	m.mu.Lock()
	m.waiting++
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.waiting--
		m.mu.Unlock()
	}()
	for {
		m.mu.Lock()
		now := m.tick()
		changed := m.changed
		r, found := m.reports[id]
		found = found && now < r.exp
		running := false
		if h := m.hosts[t.host]; h != nil && !found {
			m.expireLeases(h, now)
			_, running = h.leases[id]
		}
		m.mu.Unlock()
		switch {
		case found:
			e, err := r.entry(id, now)
			if err != nil {
				return Entry{}, fmt.Errorf("wait: %w", err)
			}
			return e, nil
		case !running:
			return Entry{}, fmt.Errorf("wait for %s: %w", id, ErrAbandoned)
		}
		select {
		case <-ctx.Done():
			return Entry{}, fmt.Errorf("wait for %s: %w", id, ctx.Err())
		case <-changed:
		case <-tick.C:
		}
	}
}

// Complete implements Store.
func (m *MemoryStore) Complete(_ context.Context, l Lease, o Outcome) error {
	t, err := parseTarget(l.URL)
	if err == nil {
		err = checkID(l.ID)
	}
	if err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	blob, err := encodeBlob(o.Report, m.limits.MaxReportBytes)
	if err != nil {
		return fmt.Errorf("complete %s: %w", l.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
	m.reports[l.ID] = memReport{at: now, exp: now + m.limits.ReportTTL.Milliseconds(), failed: o.Failed, blob: blob}
	defer m.broadcast()
	fin := m.keys.fin(t.host, l.ID)
	h := m.host(t.host)
	m.expireLeases(h, now)
	if _, held := h.leases[l.ID]; !held {
		if m.fins[fin] > now {
			return nil // a repeated Complete that already succeeded
		}
		return fmt.Errorf("complete %s: %w", l.ID, ErrLeaseLost)
	}
	delete(h.leases, l.ID)
	if !o.Failed {
		m.results[m.keys.result(t)] = memResult{id: l.ID, at: now, exp: now + m.limits.CacheTTL.Milliseconds(), blob: blob}
	}
	m.fins[fin] = now + m.limits.LeaseTTL.Milliseconds()
	return nil
}

// Report implements Store.
func (m *MemoryStore) Report(_ context.Context, id string) (Entry, error) {
	m.mu.Lock()
	now := m.tick()
	r, ok := m.reports[id]
	m.mu.Unlock()
	if !ok || now >= r.exp {
		return Entry{}, fmt.Errorf("report %s: %w", id, ErrNotFound)
	}
	target, age, isRef, err := parseRef(r.blob)
	if isRef && err == nil {
		m.mu.Lock()
		r, ok = m.reports[target]
		m.mu.Unlock()
		if !ok || now >= r.exp {
			return Entry{}, fmt.Errorf("report %s: %w", id, ErrNotFound)
		}
	}
	var e Entry
	if err == nil {
		e, err = r.entry(target, now)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("report %s: %w", id, err)
	}
	if isRef {
		return referred(id, age, e), nil
	}
	e.ID = id
	return e, nil
}

// Refer implements Store.
func (m *MemoryStore) Refer(_ context.Context, id string, e Entry) error {
	if err := checkRefer(id, e); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
	r, ok := m.reports[e.ID]
	if !ok || now >= r.exp {
		return fmt.Errorf("refer %s: %w", e.ID, ErrNotFound)
	}
	if _, _, isRef, _ := parseRef(r.blob); isRef {
		return fmt.Errorf("refer %s: %s is a reference itself", id, e.ID)
	}
	m.reports[id] = memReport{at: now, exp: r.exp, blob: refBlob(e.ID, e.Age)}
	return nil
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
		if len(h.leases) == 0 && len(h.starts) == 0 {
			delete(m.hosts, name)
		}
	}
}

// freshResult returns the cached result of t if still fresh; m.mu is held.
func (m *MemoryStore) freshResult(t target, now int64) (memResult, bool) {
	k := m.keys.result(t)
	r, ok := m.results[k]
	if ok && now >= r.exp {
		delete(m.results, k)
		ok = false
	}
	return r, ok
}

// host returns the state of a host, creating it; m.mu is held.
func (m *MemoryStore) host(name string) *memHost {
	h := m.hosts[name]
	if h == nil {
		h = &memHost{leases: make(map[string]memLease)}
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
			put(m.keys.run(l.t), l.exp)
		}
		if n := len(h.starts); n > 0 {
			put(m.keys.starts(name), h.starts[n-1].at+m.limits.longest().Milliseconds())
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
