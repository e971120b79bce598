package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// The states of a run-now answer.
const (
	// runRecorded: a fresh cached result was recorded as the run at once.
	runRecorded = "recorded"
	// runQueued: the run starts at once.
	runQueued = "queued"
	// runPending: a per-host limit puts the start off until starts_at.
	runPending = "pending"
)

// runNowWithin is how far off a member's run-now may be reserved: any
// start the host's limits give, so that the run waits rather than fails.
const runNowWithin = 24 * time.Hour

// runAnswer is the answer to a run-now: recorded at once from the cache,
// queued to start at once, or pending until starts_at for reason.
type runAnswer struct {
	HistoryID string `json:"history_id"`
	// Status is State, for clients written before State.
	Status   string        `json:"status"`
	State    string        `json:"state"`
	StartsAt *time.Time    `json:"starts_at,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	History  string        `json:"history"`
	Entry    *historyEntry `json:"entry,omitempty"`
	// Message says in words what happened, for a cached answer: how old
	// the result is and when the fresh run starts.
	Message string `json:"message,omitempty"`
	// FreshRun is the run a cached answer queued (or joined) for as soon
	// as the cache allows a fetch.
	FreshRun *freshRun `json:"fresh_run,omitempty"`
}

// freshRun is the run a cached run-now answer promises.
type freshRun struct {
	HistoryID string    `json:"history_id"`
	StartsAt  time.Time `json:"starts_at"`
}

// runNow is POST /api/v1/sites/{id}/audits: a member-triggered re-audit.
func (s *Server) runNow() http.Handler {
	return s.memberAPI(func(w http.ResponseWriter, r *http.Request, m records.Member) error {
		site, err := s.ownSite(r, m)
		if err != nil {
			return err
		}
		a, err := s.queueRun(r.Context(), m, site)
		if err != nil {
			return err
		}
		status := http.StatusAccepted
		if a.State == runRecorded {
			status = http.StatusCreated
		}
		writeJSON(w, status, a)
		return nil
	})
}

// queueRun charges the member's hourly run-now allowance, then asks the
// auditor for the run's start, as a submission does: a fresh cached result
// is recorded as the run at once (the site is not contacted); otherwise
// the run is queued for the start the host's limits reserved for it.
func (s *Server) queueRun(ctx context.Context, m records.Member, site records.Site) (runAnswer, error) {
	now := s.cfg.Now()
	wait, err := s.cfg.Members.ChargeRun(ctx, m.ID, now, s.cfg.RunsPerHour)
	if errors.Is(err, records.ErrLimit) {
		wait = max(wait, time.Second)
		return runAnswer{}, &apiError{Status: http.StatusTooManyRequests, Code: codeRateLimited, RetryAfter: wait,
			Message: fmt.Sprintf("Your allowance is %s an hour, and you have used it; try again in %s.",
				compare.Plural(s.cfg.RunsPerHour, "run", "runs"), compare.Duration(wait))}
	}
	if err != nil {
		return runAnswer{}, memberError(err)
	}
	t, err := s.cfg.Auditor.Submit(ctx, audit.Request{URL: site.URL, Trigger: audit.TriggerMember, ID: audit.NewID(), Within: runNowWithin})
	if err != nil {
		return runAnswer{}, errorFor(err)
	}
	history := "/api/v1/sites/" + site.ID + "/history"
	if rep := t.Ready(); rep != nil && rep.Cached {
		return s.cachedRun(ctx, site, rep, now, history)
	}
	run := runStart(t, now)
	id, err := s.cfg.Queue.RunNow(ctx, site.ID, now, run)
	if err != nil {
		if t.Reserved() {
			if uerr := s.cfg.Auditor.Unreserve(context.WithoutCancel(ctx), t); uerr != nil {
				s.cfg.Logger.Warn("give back a reserved start", "id", t.ID, "error", uerr)
			}
		}
		return runAnswer{}, notQueued(err)
	}
	a := runAnswer{HistoryID: id, Status: runQueued, State: runQueued, History: history}
	if run.StartsAt.After(now) {
		at := run.StartsAt.UTC()
		a.StartsAt = &at
	}
	if run.Reason != "" {
		a.Status, a.State, a.Reason = runPending, runPending, run.Reason
	}
	return a, nil
}

// cachedRun answers a run-now the result cache answered: the cached
// result is the run (a new history entry unless the latest already is that
// report), and a fresh run is queued for the moment the cache lets the
// page be fetched again, or joined when one is already waiting.
func (s *Server) cachedRun(ctx context.Context, site records.Site, rep *audit.Report, now time.Time, history string) (runAnswer, error) {
	e, err := s.cfg.Queue.RecordCached(ctx, site.ID, now, rep)
	if err != nil {
		return runAnswer{}, notQueued(err)
	}
	s.metrics.cacheHits.Inc()
	s.count(audit.TriggerMember, outcomeCached, hostOf(rep.URL), rep.ID)
	fresh, err := s.freshRun(ctx, site, rep, now)
	if err != nil {
		return runAnswer{}, notQueued(err)
	}
	v := entryView(e)
	age := time.Duration(rep.CacheAgeS) * time.Second
	msg := fmt.Sprintf("Answered from the audit of %s ago; this service fetches a page at most once every %s, so a fresh run starts at %s.",
		compare.Duration(age.Round(time.Second)), compare.Span(s.cfg.Policy.Limits.CacheTTL), fresh.StartsAt.UTC().Format(pendingTime))
	return runAnswer{HistoryID: e.ID, Status: runRecorded, State: runRecorded, History: history, Entry: &v, Message: msg, FreshRun: &fresh}, nil
}

// freshRun is the site's fresh run after a cached answer: the one already
// waiting, else a new one queued for when the cached result rep is no
// longer fresh (a second after, by the cache's TTL).
func (s *Server) freshRun(ctx context.Context, site records.Site, rep *audit.Report, now time.Time) (freshRun, error) {
	ps, err := s.cfg.Queue.PendingRuns(ctx, site.ID)
	if err != nil {
		return freshRun{}, err
	}
	for _, p := range ps {
		if p.Fresh && !p.Running {
			return freshRun{HistoryID: p.HistoryID, StartsAt: p.StartsAt.UTC()}, nil
		}
	}
	ttl := s.cfg.Policy.Limits.CacheTTL
	age := time.Duration(rep.CacheAgeS) * time.Second
	// When the queue's worker will find the result stale, as it reckons.
	at := now.Add(schedule.UntilStale(ttl, rep)).Truncate(time.Second)
	reason := fmt.Sprintf("the fresh run asked for at %s: the audit of %s answered then, and this service fetches a page at most once every %s",
		now.UTC().Format(pendingTime), now.Add(-age).UTC().Format(pendingTime), compare.Span(ttl))
	// Due at its start: the cached answer's entry has the request's time.
	id, err := s.cfg.Queue.RunNow(ctx, site.ID, at, schedule.MemberRun{StartsAt: at, Reason: reason, Fresh: true})
	if err != nil {
		return freshRun{}, err
	}
	return freshRun{HistoryID: id, StartsAt: at.UTC()}, nil
}

// runStart is when a run-now ticket t, submitted at now, may start and
// why not sooner: its reserved start; refused for longer than
// runNowWithin, the wait its report gives; joining a running audit, at once.
func runStart(t *audit.Ticket, now time.Time) schedule.MemberRun {
	var run schedule.MemberRun
	switch rep := t.Ready(); {
	case t.Reserved():
		run.StartsAt = t.StartsAt
		if t.StartsAt.After(now) {
			run.Reason = audit.WaitReason(t.Limit)
			if run.Reason == "" {
				run.Reason = "an audit of this page is queued to start then"
			}
		}
	case rep != nil && rep.Status == audit.StatusRateLimited:
		run.StartsAt = now.Add(time.Duration(rep.RetryAfterS) * time.Second)
		run.Reason = audit.WaitReason(rep.Limit)
	}
	// Otherwise joined: it starts at once, and the running audit's result
	// answers it from the cache.
	return run
}

// notQueued is the answer when the run could be neither recorded nor queued.
func notQueued(err error) *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable, RetryAfter: storeRetryAfter,
		Message: "The re-audit could not be queued; try again in " + compare.Duration(storeRetryAfter) + ".", cause: err}
}

// pendingTime is how the site page says when a waiting run starts.
const pendingTime = "2 Jan 15:04:05 UTC"

// pendingRow is a run-now still waiting, on the site page: running now, or
// starting at StartsAt, put off by a limit (Reason, in words) or not.
type pendingRow struct {
	Running, Scheduled    bool
	StartsAt, Due, Reason string
	// Refreshes: the page reloads itself while this run runs.
	Refreshes bool
}

// pendingRows lists the site's waiting run-now requests; none when the
// queue does not answer (the page still shows the history). A run whose
// history entry is already recorded has ended, although the queue may
// mark its job done a moment later: it is not listed.
func (s *Server) pendingRows(ctx context.Context, siteID string, recorded map[string]bool) []pendingRow {
	ps, err := s.cfg.Queue.PendingRuns(ctx, siteID)
	if err != nil {
		s.cfg.Logger.Warn("pending runs", "site", siteID, "error", err)
		return nil
	}
	rows := make([]pendingRow, 0, len(ps))
	for _, p := range ps {
		if recorded[p.HistoryID] {
			continue
		}
		row := pendingRow{Running: p.Running, Scheduled: p.Scheduled, StartsAt: p.StartsAt.UTC().Format(pendingTime), Reason: p.Reason}
		if p.Scheduled && p.StartsAt.Sub(p.Due) > 2*time.Second {
			row.Due = p.Due.UTC().Format(pendingTime)
			row.Reason = "put off by a per-site limit or by a result still fresh in the cache"
		}
		rows = append(rows, row)
	}
	return rows
}
