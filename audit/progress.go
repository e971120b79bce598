package audit

import (
	"context"
	"time"

	"lekta.dev/lekta/cache"
)

// progressTimeout bounds one progress write: progress is for display, and a
// slow store must not hold up an audit for it (a write that takes longer
// is skipped; the next step writes again). It is above the p99.9 of a
// Redis decision on a loaded machine (cache.DefaultCallTimeout).
const progressTimeout = 300 * time.Millisecond

// Queued records in the shared store that t waits in the queue at
// position (1 is next) until t.StartsAt, so that every instance can answer
// for it. Call it after Submit for a Reserved ticket. Errors wrap
// ErrUnavailable; the audit may go ahead without the entry.
func (a *Auditor) Queued(ctx context.Context, t *Ticket, position int) error {
	err := a.cfg.Store.SetProgress(ctx, cache.Progress{ID: t.ID, URL: t.URL, Status: cache.ProgressQueued,
		Position: position, StartsAt: t.StartsAt, Keep: a.cfg.QueuedKeep})
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// Progress returns where the audit id stands, as any instance recorded it:
// found is false when it is neither queued nor running anywhere (it may
// have finished: read its report). Errors wrap ErrUnavailable.
func (a *Auditor) Progress(ctx context.Context, id string) (p cache.Progress, found bool, err error) {
	p, found, err = a.cfg.Store.Progress(ctx, id)
	if err != nil {
		return cache.Progress{}, false, unavailable(err)
	}
	return p, found, nil
}

// step reports s to the ticket's watcher and records it in the shared store.
func (a *Auditor) step(t *Ticket, s Step) {
	t.step(s)
	a.stepStored(t, s)
}

// stepOnce is step, without the store write when stepStored wrote s
// already (Run writes the first step before the admission).
func (a *Auditor) stepOnce(t *Ticket, s Step) {
	if t.stored == s {
		t.step(s)
		return
	}
	a.step(t, s)
}

// stepStored records s in the shared store, for every instance to show.
func (a *Auditor) stepStored(t *Ticket, s Step) {
	t.stored = s
	ctx, cancel := context.WithTimeout(context.Background(), progressTimeout)
	defer cancel()
	err := a.cfg.Store.SetProgress(ctx, cache.Progress{ID: t.ID, URL: t.URL, Status: cache.ProgressRunning, Step: string(s)})
	if err != nil {
		a.cfg.Logger.Warn("record progress", "id", t.ID, "error", err)
	}
}

// dropProgress forgets id's progress entry once its report is stored (or
// could not be); an entry left behind expires after cache.ProgressTTL.
func (a *Auditor) dropProgress(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), progressTimeout)
	defer cancel()
	if err := a.cfg.Store.DropProgress(ctx, id); err != nil {
		a.cfg.Logger.Warn("drop progress", "id", id, "error", err)
	}
}
