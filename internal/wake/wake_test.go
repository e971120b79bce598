package wake

import "testing"

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestHub: a Signal wakes the waiters of its id only, All wakes everyone,
// and a stopped waiter is gone.
func TestHub(t *testing.T) {
	h := New()
	a1, stopA1 := h.Watch("a")
	a2, stopA2 := h.Watch("a")
	b, stopB := h.Watch("b")
	defer stopA1()
	defer stopA2()
	if !h.Waiting() {
		t.Fatal("three waiters, Waiting says none")
	}
	h.Signal("a")
	if !closed(a1) || !closed(a2) || closed(b) {
		t.Fatalf("after Signal(a): a1 %v a2 %v b %v, want a's woken, b not", closed(a1), closed(a2), closed(b))
	}
	stopB()
	if h.Waiting() {
		t.Fatal("every waiter woken or stopped, Waiting says some")
	}
	c, stopC := h.Watch("c")
	defer stopC()
	h.Signal("b") // nobody waits for b any more: no panic, c untouched
	if closed(c) {
		t.Fatal("Signal(b) woke c")
	}
	h.All()
	if !closed(c) {
		t.Fatal("All did not wake c")
	}
}
