// Package wake tells the waiters of an audit that its report was stored:
// a ?wait= long-poll, the running report page. The sources are the
// process's own audits (Signal as they store their reports) and whatever
// carries other instances' news (Redis pub/sub, PostgreSQL's
// LISTEN/NOTIFY, the SQLite file changing); a source that may have missed
// news wakes every waiter (All), who read the store again. A waiter never
// trusts a wake-up for the answer: it reads the store, and a wake-up that
// was lost costs it only its slow fallback read.
package wake

import "sync"

// Hub holds the waiters of this process, by report id. The zero Hub is
// not usable; make one with New.
type Hub struct {
	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}
	n       int
}

// New returns an empty Hub.
func New() *Hub { return &Hub{waiters: make(map[string]map[chan struct{}]struct{})} }

// Watch returns a channel that is closed at the next Signal of id or the
// next All, and a stop that the waiter calls when it stops waiting
// (closed or not). A waiter watches before it reads the store, so that a
// report stored between the two still wakes it.
func (h *Hub) Watch(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	set := h.waiters[id]
	if set == nil {
		set = make(map[chan struct{}]struct{})
		h.waiters[id] = set
	}
	set[ch] = struct{}{}
	h.n++
	h.mu.Unlock()
	return ch, func() { h.drop(id, ch) }
}

func (h *Hub) drop(id string, ch chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.waiters[id]
	if _, ok := set[ch]; !ok {
		return // woken already
	}
	delete(set, ch)
	h.n--
	if len(set) == 0 {
		delete(h.waiters, id)
	}
}

// Signal wakes the waiters of id: its report may be stored now.
func (h *Hub) Signal(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wake(id)
}

// All wakes every waiter: a source may have missed news (it reconnected,
// or it cannot tell which report was stored).
func (h *Hub) All() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id := range h.waiters {
		h.wake(id)
	}
}

func (h *Hub) wake(id string) {
	for ch := range h.waiters[id] {
		close(ch)
		h.n--
	}
	delete(h.waiters, id)
}

// Waiting reports whether anybody waits: a source that must poll to learn
// anything polls only then.
func (h *Hub) Waiting() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n > 0
}
