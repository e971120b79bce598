package cache

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Admit implements Store.
func (m *MemoryStore) Admit(_ context.Context, url, id string) (Admission, error) {
	t, err := parseTarget(url)
	if err == nil {
		err = checkID(id)
	}
	if err != nil {
		return Admission{}, fmt.Errorf("admit: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
	h := m.host(t.host)
	if a, decided, err := m.settled(h, t, id, now); decided || err != nil {
		if err == nil && a.Decision != Admitted {
			delete(h.resv, t.hash)
		}
		return a, err
	}
	r, held := h.resv[t.hash]
	own := r.at
	if held = held && r.at+ReserveGrace.Milliseconds() > now; !held {
		own = -1
	}
	if wait, reason := admitWait(m.limits, h.startTimes(), h.others(t.hash, now), own, h.live(), now); reason >= 0 {
		a := Admission{Decision: Refused, RetryAfter: ms(wait), Reason: m.limits.reason(reason)}
		if held {
			h.resv[t.hash] = memResv{id: r.id, at: now + wait}
			a.StartsAt = time.UnixMilli(now + wait)
		}
		return a, nil
	}
	delete(h.resv, t.hash)
	h.leases[id] = memLease{t: t, start: now, exp: m.limits.firstLease(now)}
	i := sort.Search(len(h.starts), func(i int) bool { return h.starts[i].at > now })
	h.starts = append(h.starts, memStart{})
	copy(h.starts[i+1:], h.starts[i:])
	h.starts[i] = memStart{at: now, id: id}
	trimStarts(h, now-m.limits.longest().Milliseconds())
	return Admission{Decision: Admitted, Lease: Lease{Host: t.host, URL: t.url, ID: id}}, nil
}

// Reserve implements Store.
func (m *MemoryStore) Reserve(_ context.Context, url, id string, within time.Duration) (Admission, error) {
	t, err := parseTarget(url)
	if err == nil {
		err = checkID(id)
	}
	if err != nil {
		return Admission{}, fmt.Errorf("reserve: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
	h := m.host(t.host)
	if a, decided, err := m.settled(h, t, id, now); decided || err != nil {
		return a, err
	}
	if r, ok := h.resv[t.hash]; ok && r.id != id && r.at+ReserveGrace.Milliseconds() > now {
		// The URL's start is reserved already (its audit is being queued):
		// the same start, shared; the queue joins the two.
		return Admission{Decision: Reserved, StartsAt: time.UnixMilli(r.at)}, nil
	}
	at, wait, reason, refused := plan(m.limits, h.startTimes(), h.others(t.hash, now), h.live(), now, within)
	if refused {
		delete(h.resv, t.hash)
		return Admission{Decision: Refused, RetryAfter: ms(wait), Reason: m.limits.reason(reason)}, nil
	}
	h.resv[t.hash] = memResv{id: id, at: at}
	return reservedAt(m.limits, at, now, reason), nil
}

// Unreserve implements Store.
func (m *MemoryStore) Unreserve(_ context.Context, url, id string) error {
	t, err := parseTarget(url)
	if err != nil {
		return fmt.Errorf("unreserve: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.hosts[t.host]; h != nil && h.resv[t.hash].id == id {
		delete(h.resv, t.hash)
	}
	return nil
}

// settled answers what a decision answers before the limits are asked: a
// fresh result, the URL's own running audit (a retry of id's admission
// when it is id's). decided is false when the limits decide; m.mu is held.
func (m *MemoryStore) settled(h *memHost, t target, id string, now int64) (Admission, bool, error) {
	if r, ok := m.freshResult(t, now); ok {
		e, err := r.entry(now)
		if err != nil {
			return Admission{}, true, err
		}
		return Admission{Decision: Cached, Entry: e}, true, nil
	}
	m.expireLeases(h, now)
	for lid, l := range h.leases {
		if l.t.hash != t.hash {
			continue
		}
		if lid == id {
			return Admission{Decision: Admitted, Lease: Lease{Host: t.host, URL: t.url, ID: id}}, true, nil
		}
		return Admission{Decision: InFlight, RunningID: lid}, true, nil
	}
	return Admission{}, false, nil
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
	ml.exp = max(ml.exp, now+m.limits.LeaseTTL.Milliseconds())
	h.leases[l.ID] = ml
	return nil
}

// contacted moves id's start later by d (Outcome.Contacted), keeping the
// starts in order.
func (h *memHost) contacted(id string, d time.Duration) {
	if d <= 0 {
		return
	}
	for i, s := range h.starts {
		if s.id == id {
			h.starts[i].at += d.Milliseconds()
			slices.SortStableFunc(h.starts, func(a, b memStart) int { return cmp.Compare(a.at, b.at) })
			return
		}
	}
}

// startTimes are the host's real starts, ascending.
func (h *memHost) startTimes() []int64 {
	out := make([]int64, len(h.starts))
	for i, s := range h.starts {
		out[i] = s.at
	}
	return out
}

// others are the live reservations of the host's other URLs.
func (h *memHost) others(hash string, now int64) []reservation {
	var out []reservation
	for k, r := range h.resv {
		if k != hash && r.at+ReserveGrace.Milliseconds() > now {
			out = append(out, reservation{id: r.id, at: r.at})
		}
	}
	return out
}

// live are the host's leases (expired ones already cleared).
func (h *memHost) live() []hostLease {
	out := make([]hostLease, 0, len(h.leases))
	for _, l := range h.leases {
		out = append(out, hostLease{start: l.start, exp: l.exp})
	}
	return out
}
