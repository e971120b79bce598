package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lekta.dev/lekta/cache"
)

// Report returns a stored report by id; ErrNotFound when there is none.
// The id of a cached answer reads as that answer: the result it pointed at,
// under its own id, with the cache age it was answered with.
func (a *Auditor) Report(ctx context.Context, id string) (*Report, error) {
	e, err := a.cfg.Store.Report(ctx, id)
	if err != nil {
		if errors.Is(err, cache.ErrUnavailable) {
			return nil, unavailable(err)
		}
		return nil, err
	}
	if e.Referred {
		return cachedReport(e)
	}
	return Decode(e.Report)
}

// answerCached gives the cached result e a report id of its own, id, so a
// second submitter never learns the first one's id (and with it that
// somebody audited this exact URL), then returns it as a cached answer.
func (a *Auditor) answerCached(ctx context.Context, id string, e cache.Entry) (*Report, error) {
	if err := a.cfg.Store.Refer(ctx, id, e); err != nil {
		if errors.Is(err, cache.ErrUnavailable) {
			return nil, unavailable(err)
		}
		return nil, fmt.Errorf("answer from the cache: %w", err)
	}
	e.ID = id
	return cachedReport(e)
}

// store hands the report to the store and releases the lease, retrying a
// store fault for the lease's lifetime. A report over the size cap is
// stored without the lanes' extracts instead.
func (a *Auditor) store(l cache.Lease, r *Report, contacted time.Duration) error {
	b, err := r.Encode()
	if err != nil {
		return fmt.Errorf("store report: %w", err)
	}
	out := cache.Outcome{Report: b, Failed: !r.Status.Ran(), Contacted: contacted}
	err = a.retry("store report "+l.ID, func(ctx context.Context) error {
		err := a.cfg.Store.Complete(ctx, l, out)
		if errors.Is(err, cache.ErrTooLarge) {
			slim := *r
			slim.Lanes.Plain.Page, slim.Lanes.Render.Page = nil, nil
			slim.Reason = "the report was too large to keep whole; the lanes' extracts were dropped"
			if out.Report, err = slim.Encode(); err == nil {
				err = a.cfg.Store.Complete(ctx, l, out)
			}
		}
		return err
	})
	if err != nil {
		if errors.Is(err, cache.ErrUnavailable) {
			return fmt.Errorf("%w (%w)", ErrNotStored, err)
		}
		return fmt.Errorf("store report: %w", err)
	}
	return nil
}

// keep stores r under the ticket's id, which its submitter holds, when the
// audit ended without running on its own: a Complete without a
// held lease stores the report by id and touches no lease or cache
// (cache.ErrLeaseLost, expected here). Best effort: the instance that
// queued the ticket has the report in memory too.
func (a *Auditor) keep(t *Ticket, r *Report) {
	if err := a.keepErr(t, r); err != nil {
		a.cfg.Logger.Warn("keep report", "id", t.ID, "error", err)
	}
}

// keepErr is keep, returning the error.
func (a *Auditor) keepErr(t *Ticket, r *Report) error {
	b, err := r.Encode()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err = a.cfg.Store.Complete(ctx, cache.Lease{Host: t.target.Hostname(), URL: t.URL, ID: t.ID},
			cache.Outcome{Report: b, Failed: true})
		cancel()
	}
	if err != nil && !errors.Is(err, cache.ErrLeaseLost) {
		return err
	}
	return nil
}

// cachedReport decodes a cache entry and marks it as answered from the
// cache under the entry's id.
func cachedReport(e cache.Entry) (*Report, error) {
	r, err := Decode(e.Report)
	if err != nil {
		return nil, err
	}
	r.ID, r.Cached, r.CacheAgeS = e.ID, true, int64(e.Age/time.Second)
	return r, nil
}

// Cached returns the fresh cached report of rawURL without admitting an
// audit or charging any limit, or nil when there is none. The server asks
// it for a client over its own submission limit: an answer from the cache
// costs the site nothing, so it counts against no limit. Errors:
// policy.ErrInvalidURL, policy.ErrTargetRefused, ErrUnavailable.
func (a *Auditor) Cached(ctx context.Context, rawURL string) (*Report, error) {
	target, err := a.cfg.Guard.ParseTarget(rawURL)
	if err != nil {
		return nil, err
	}
	e, ok, err := a.cfg.Store.Lookup(ctx, target.String())
	switch {
	case err != nil:
		return nil, unavailable(err)
	case !ok:
		return nil, nil
	}
	return a.answerCached(ctx, a.cfg.NewID(), e)
}
