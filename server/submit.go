package server

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/schedule"
)

// submission is the answer to one submitted URL: either a report at once
// (from the cache) or an audit queued, running or joined.
type submission struct {
	id    string
	url   string
	ready *audit.Report
	// joined: the submission joined the same URL's audit already queued
	// or running.
	joined bool
	// startsAt and position are a queued audit's start and place.
	startsAt time.Time
	position int
}

// Outcomes of a submission that did not start or join an audit, as the
// metrics and logs name them.
const (
	outcomeCached        = "cached"
	outcomeJoined        = "joined"
	outcomeRateLimited   = "rate_limited"
	outcomeClientLimited = "client_limited"
	outcomeQueueFull     = "queue_full"
	outcomeShuttingDown  = "shutting_down"
	outcomeInvalidURL    = "invalid_url"
	outcomeRefused       = "target_refused"
	outcomeUnavailable   = "unavailable"
	outcomeFailed        = "failed"
	outcomeLost          = "lost"
)

// submit takes one URL from a client: the client's own limit, then the
// auditor's decision, which reserves the start the host's windows allow
// (charging nothing yet), then the shared queue, which runs the audit at
// that start on whichever instance has a free renderer. It is the one path
// every submission takes. Errors are *apiError.
func (s *Server) submit(ctx context.Context, raw string, trigger audit.Trigger, client string) (submission, error) {
	host := hostOf(raw)
	wait, ok := s.clients.allow(client)
	if !ok {
		// An answer from the cache costs the site nothing and counts
		// against no limit, this client's own included.
		if rep, err := s.cfg.Auditor.Cached(ctx, raw); err == nil && rep != nil {
			s.metrics.cacheHits.Inc()
			s.count(trigger, outcomeCached, hostOf(rep.URL), rep.ID)
			return submission{id: rep.ID, ready: rep}, nil
		}
		s.count(trigger, outcomeClientLimited, host, "")
		s.metrics.refusals.WithLabelValues(reasonClient).Inc()
		return submission{}, clientLimited(wait, s.cfg.ClientRate)
	}
	if s.stopping.Load() {
		s.count(trigger, outcomeShuttingDown, host, "")
		return submission{}, queueRefusal(errStopping)
	}
	t, err := s.cfg.Auditor.Submit(ctx, audit.Request{URL: raw, Trigger: trigger, ID: audit.NewID(), Within: s.cfg.MaxStartWait})
	if err != nil {
		e := errorFor(err)
		s.count(trigger, e.outcome, host, "")
		if e.Status >= 500 {
			s.cfg.Logger.Warn("submit audit", "host", host, "error", err)
		}
		return submission{}, e
	}
	if rep := t.Ready(); rep != nil {
		if rep.Status != audit.StatusRateLimited {
			s.clients.refund(client) // from the cache: no submission to count
		}
		return s.answered(t, rep)
	}
	if t.Joined() {
		s.count(trigger, outcomeJoined, hostOf(t.URL), t.ID)
		return submission{id: t.ID, url: t.URL, joined: true}, nil
	}
	return s.enqueue(ctx, t, trigger)
}

// enqueue puts the audit of ticket t, whose start is reserved, in the
// shared queue (or joins the same URL's audit queued there), giving the
// reservation back when the queue does not take it.
func (s *Server) enqueue(ctx context.Context, t *audit.Ticket, trigger audit.Trigger) (submission, error) {
	host := hostOf(t.URL)
	var (
		enq schedule.Enqueued
		err error
	)
	if s.stopping.Load() {
		err = errStopping // shutdown began during Submit: nothing is queued
	} else {
		enq, err = s.cfg.Queue.Enqueue(ctx, schedule.AuditArgs{ID: t.ID, URL: t.URL, Trigger: string(trigger)}, t.StartsAt)
	}
	// A join keeps the reservation: it is the URL's, and the queued audit
	// it joined consumes it when it starts.
	if err != nil {
		if uerr := s.cfg.Auditor.Unreserve(context.WithoutCancel(ctx), t); uerr != nil {
			s.cfg.Logger.Warn("give back a reserved start", "id", t.ID, "host", host, "error", uerr)
		}
	}
	switch {
	case errors.Is(err, schedule.ErrQueueFull), errors.Is(err, errStopping):
		e := queueRefusal(err)
		s.count(trigger, e.outcome, host, "")
		return submission{}, e
	case err != nil:
		s.count(trigger, outcomeUnavailable, host, "")
		s.cfg.Logger.Warn("queue audit", "host", host, "error", err)
		return submission{}, unavailableRefusal(err)
	case enq.Joined:
		s.count(trigger, outcomeJoined, host, enq.ID)
		return submission{id: enq.ID, url: t.URL, joined: true}, nil
	}
	// Before the audit can start, so that its steps come after this entry.
	if err := s.cfg.Auditor.Queued(ctx, t, enq.Position); err != nil {
		s.cfg.Logger.Warn("record queued audit", "id", t.ID, "host", host, "error", err)
	}
	// Counted, not logged: the audit's own line comes when it ends.
	s.metrics.submissions.WithLabelValues(string(trigger), outcomeQueued).Inc()
	return submission{id: t.ID, url: t.URL, startsAt: t.StartsAt, position: enq.Position}, nil
}

// answered turns a ticket answered at once into a submission or a refusal.
func (s *Server) answered(t *audit.Ticket, rep *audit.Report) (submission, error) {
	host := hostOf(t.URL)
	if rep.Status == audit.StatusRateLimited {
		reason := limitReason(rep)
		s.metrics.refusals.WithLabelValues(reason).Inc()
		s.count(t.Trigger, outcomeRateLimited, host, t.ID)
		return submission{}, hostLimited(rep)
	}
	s.metrics.cacheHits.Inc()
	s.count(t.Trigger, outcomeCached, host, rep.ID)
	return submission{id: rep.ID, ready: rep}, nil
}

// count records a submission's outcome in the metrics and the log.
func (s *Server) count(trigger audit.Trigger, outcome, host, id string) {
	s.metrics.submissions.WithLabelValues(string(trigger), outcome).Inc()
	s.logAudit(id, host, trigger, outcome, nil)
}

// countInvalid records a submission refused before it named a URL the
// auditor could judge (a body that is not JSON, a form from elsewhere).
func (s *Server) countInvalid(trigger audit.Trigger, err error) {
	outcome := errorOutcome(err)
	var e *apiError
	if outcome == "" && errors.As(err, &e) {
		outcome = e.Code
	}
	s.metrics.submissions.WithLabelValues(string(trigger), outcome).Inc()
}

// limitReason is the limiter constraint a rate_limited report names:
// "concurrency" or a window such as "1/1m".
func limitReason(rep *audit.Report) string {
	if rep.Limit == "" {
		return "host"
	}
	return rep.Limit
}

// hostOf is the host of a submitted URL for logs, or "" when it has none.
func hostOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// errorOutcome is the outcome name of a submission error.
func errorOutcome(err error) string {
	var e *apiError
	if errors.As(err, &e) {
		return e.outcome
	}
	return outcomeFailed
}
