package cache

import (
	"errors"
	"testing"
	"time"
)

func testProgress(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	wantProgress(t, h, "id1", Progress{}, false)
	q := Progress{ID: "id1", URL: urlA, Status: ProgressQueued, Position: 3}
	if err := h.SetProgress(bg, q); err != nil {
		t.Fatalf("SetProgress: %v", err)
	}
	q.UpdatedAt = t0
	wantProgress(t, h, "id1", q, true)
	wantProgress(t, h, "id2", Progress{}, false)

	h.clock.Set(time.Minute)
	r := Progress{ID: "id1", URL: urlA, Status: ProgressRunning, Step: "render"}
	if err := h.SetProgress(bg, r); err != nil {
		t.Fatalf("SetProgress: %v", err)
	}
	r.UpdatedAt = t0.Add(time.Minute)
	// Refreshed at 1m: alive until 1m + ProgressTTL, to the millisecond.
	h.clock.Set(time.Minute + ProgressTTL - time.Millisecond)
	wantProgress(t, h, "id1", r, true)
	h.clock.Set(time.Minute + ProgressTTL)
	wantProgress(t, h, "id1", Progress{}, false)

	if err := h.SetProgress(bg, q); err != nil {
		t.Fatalf("SetProgress: %v", err)
	}
	if err := h.DropProgress(bg, "id1"); err != nil {
		t.Fatalf("DropProgress: %v", err)
	}
	wantProgress(t, h, "id1", Progress{}, false)
	if err := h.DropProgress(bg, "never-set"); err != nil {
		t.Fatalf("DropProgress of an id never set: %v", err)
	}
}

func testProgressBadInput(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	for _, p := range []Progress{
		{URL: urlA, Status: ProgressQueued},
		{ID: "a b", URL: urlA, Status: ProgressQueued},
		{ID: "id1", Status: ProgressQueued},
		{ID: "id1", URL: urlA, Status: "done"},
		{ID: "id1", URL: urlA, Status: ProgressQueued, Position: -1},
	} {
		if err := h.SetProgress(bg, p); !errors.Is(err, ErrNoProgress) {
			t.Errorf("SetProgress(%+v): %v, want ErrNoProgress", p, err)
		}
	}
	wantProgress(t, h, "id1", Progress{}, false)
}

// testProgressKept: an entry set with a Keep longer than ProgressTTL lives
// that long past its start (an instance's own queue, stopped for a day),
// and is read back as it was set.
func testProgressKept(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	const keep = 48 * time.Hour
	q := Progress{ID: "id1", URL: urlA, Status: ProgressQueued, Position: 1, StartsAt: t0.Add(time.Second), Keep: keep}
	if err := h.SetProgress(bg, q); err != nil {
		t.Fatalf("SetProgress: %v", err)
	}
	q.UpdatedAt, q.Keep = t0, 0
	h.clock.Set(24 * time.Hour)
	wantProgress(t, h, "id1", q, true)
	h.clock.Set(time.Second + keep)
	wantProgress(t, h, "id1", Progress{}, false)
}

func testProgressStartsAt(t *testing.T, newStore factory) {
	h := newStore(t, Defaults(), slowPoll)
	q := Progress{ID: "id1", URL: urlA, Status: ProgressQueued, Position: 2, StartsAt: t0.Add(10 * time.Minute)}
	if err := h.SetProgress(bg, q); err != nil {
		t.Fatalf("SetProgress: %v", err)
	}
	q.UpdatedAt = t0
	h.clock.Set(10*time.Minute + ProgressTTL - time.Millisecond)
	wantProgress(t, h, "id1", q, true)
	h.clock.Set(10*time.Minute + ProgressTTL)
	wantProgress(t, h, "id1", Progress{}, false)
}
