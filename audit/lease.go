package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lekta.dev/lekta/cache"
)

// Store retries after an audit: these go to our own store, never the site.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 2 * time.Second
	// missedBeats is how many renewals in a row may fail before the holder
	// stops its audit: with a beat every LeaseTTL/3, it stops at least one
	// beat before its lease can lapse.
	missedBeats = 2
)

// CancelError is the cause an audit's context was cancelled with when it
// must end as StatusCancelled: Finish then ends a ticket that has not
// started at once, without admitting it (so nothing was charged), and a
// running audit stops and is reported as cancelled with Reason.
type CancelError struct {
	// Reason says why, for the report: "the service was shutting down".
	Reason string
}

// Error says that the audit was cancelled and why.
func (e *CancelError) Error() string { return "audit cancelled: " + e.Reason }

// errLeaseGone is the cause of a running audit's cancellation when its
// holder lost its lease on the host or could not renew it.
var errLeaseGone = errors.New("the audit lost its lease on the host")

// cancelReason is the CancelError that cancelled ctx, if any.
func cancelReason(ctx context.Context) (string, bool) {
	var ce *CancelError
	if errors.As(context.Cause(ctx), &ce) {
		return ce.Reason, true
	}
	return "", false
}

// heartbeat renews l every beat until stop is called; when the lease is
// lost, or missedBeats renewals in a row fail, it cancels the audit with
// errLeaseGone, so that the holder stops contacting the site at once.
type heartbeat struct {
	stop func()
	done chan struct{}
	// lost is set, before done closes, when the heartbeat gave up.
	lost error
}

func (a *Auditor) startHeartbeat(l cache.Lease, cancel context.CancelCauseFunc) *heartbeat {
	hb := &heartbeat{done: make(chan struct{})}
	quit := make(chan struct{})
	hb.stop = func() {
		close(quit)
		<-hb.done
	}
	go func() {
		defer close(hb.done)
		tick := time.NewTicker(a.beat)
		defer tick.Stop()
		missed := 0
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			ctx, done := context.WithTimeout(context.Background(), a.beat)
			err := a.cfg.Store.Renew(ctx, l)
			done()
			switch {
			case err == nil:
				missed = 0
				continue
			case errors.Is(err, cache.ErrLeaseLost):
				hb.lost = fmt.Errorf("%w: %w", errLeaseGone, err)
			default:
				if missed++; missed < missedBeats {
					a.cfg.Logger.Warn("renew lease", "id", l.ID, "host", l.Host, "error", err)
					continue
				}
				hb.lost = fmt.Errorf("%w: %d renewals in a row failed: %w", errLeaseGone, missed, err)
			}
			a.cfg.Logger.Warn("audit stopped", "id", l.ID, "host", l.Host, "error", hb.lost)
			cancel(hb.lost)
			return
		}
	}()
	return hb
}

// retry calls f until it succeeds, fails with an error that does not wrap
// cache.ErrUnavailable, or the lease's lifetime has passed since the first
// call, each call bounded by storeTimeout.
func (a *Auditor) retry(what string, f func(ctx context.Context) error) error {
	return a.retryFor(context.Background(), a.leaseTTL, storeTimeout, what, f)
}

// retryFor calls f under ctx (each call bounded by perTry when set) until
// it succeeds, fails with an error that does not wrap cache.ErrUnavailable,
// ctx ends, or bound has passed since the first call (real time: these are
// retries against our own store, never the site), with backoff.
func (a *Auditor) retryFor(ctx context.Context, bound, perTry time.Duration, what string, f func(ctx context.Context) error) error {
	start := time.Now()
	wait := retryFirst
	for n := 1; ; n++ {
		tctx, cancel := ctx, context.CancelFunc(func() {})
		if perTry > 0 {
			tctx, cancel = context.WithTimeout(ctx, perTry)
		}
		err := f(tctx)
		cancel()
		if err == nil || !errors.Is(err, cache.ErrUnavailable) || ctx.Err() != nil || time.Since(start)+wait > bound {
			if err != nil && n > 1 {
				err = fmt.Errorf("%s, %d tries: %w", what, n, err)
			}
			return err
		}
		if n == 1 {
			a.cfg.Logger.Warn(what+": retrying", "error", err)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		wait = min(2*wait, retryMax)
	}
}
