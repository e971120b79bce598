package audit

import (
	"context"
	"math"
	"time"

	"lekta.dev/lekta/cache"
)

// NotYet is Run's error when a queued audit may not start now: the host's
// limits say wait (another instance took the start, or the audit running
// there has not ended), or the service was stopping before it started. The
// site was not contacted, nothing was charged or stored, and the audit's
// reservation, if any, now holds Until: the caller puts the job off until
// then.
type NotYet struct {
	Until time.Time
	// Reason is the limit that refused ("concurrency", "1/1m") or the
	// cancellation's reason.
	Reason string
	// Sentence says it in words, for a page that shows the wait.
	Sentence string
}

// Error says why the audit waits.
func (e *NotYet) Error() string { return "the audit may not start yet: " + e.Sentence }

// An audit that does not join (Request.NoJoin) the same URL's running
// audit tries again this much later.
const (
	inFlightWait     = 2 * time.Second
	reasonInFlight   = "in flight"
	sentenceInFlight = "another audit of this page is running; this one starts after it"
)

// notYet is the NotYet of a refused admission; a queued audit's progress
// entry says when it will start now.
func (a *Auditor) notYet(ctx context.Context, t *Ticket, adm cache.Admission) *NotYet {
	until := adm.StartsAt
	if until.IsZero() {
		until = a.cfg.Now().Add(adm.RetryAfter)
	}
	wait := max(time.Duration(math.Ceil(adm.RetryAfter.Seconds()))*time.Second, time.Second)
	n := &NotYet{Until: until, Reason: adm.Reason, Sentence: LimitSentence(t.target.Hostname(), adm.Reason, wait)}
	pctx, cancel := context.WithTimeout(ctx, progressTimeout)
	defer cancel()
	if err := a.cfg.Store.SetProgress(pctx, cache.Progress{ID: t.ID, URL: t.URL, Status: cache.ProgressQueued, StartsAt: until}); err != nil {
		a.cfg.Logger.Warn("record progress", "id", t.ID, "error", err)
	}
	return n
}
