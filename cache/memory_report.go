package cache

import (
	"context"
	"fmt"
	"time"
)

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
	h.contacted(l.ID, o.Contacted)
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
