package server

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"lekta.dev/lekta/audit"
)

// submission is the answer to one submitted URL: either a report at once
// (from the cache) or a run queued, running or joined in this process.
type submission struct {
	id    string
	ready *audit.Report
	run   *run
	// joined: the submission joined the same URL's audit already running.
	joined bool
}

// Outcomes of a submission that did not start or join an audit, as the
// metrics and logs name them.
const (
	outcomeCached        = "cached"
	outcomeJoined        = "joined"
	outcomeRateLimited   = "rate_limited"
	outcomeClientLimited = "client_limited"
	outcomeQueueFull     = "queue_full"
	outcomeInvalidURL    = "invalid_url"
	outcomeRefused       = "target_refused"
	outcomeUnavailable   = "unavailable"
	outcomeFailed        = "failed"
)

// submit takes one URL from a client: the client's own limit, then a queue
// slot, then the auditor's decision, which charges nothing yet: the host's
// windows are charged when a renderer takes the audit. It is the one path
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
	if err := s.pool.reserve(); err != nil {
		s.count(trigger, outcomeQueueFull, host, "")
		return submission{}, queueRefusal(err)
	}
	t, err := s.cfg.Auditor.Submit(ctx, audit.Request{URL: raw, Trigger: trigger, ID: audit.NewID()})
	if err != nil {
		s.pool.release()
		e := errorFor(err)
		s.count(trigger, e.outcome, host, "")
		if e.Status >= 500 {
			s.cfg.Logger.Warn("submit audit", "host", host, "error", err)
		}
		return submission{}, e
	}
	if rep := t.Ready(); rep != nil {
		s.pool.release()
		if rep.Status != audit.StatusRateLimited {
			s.clients.refund(client) // from the cache: no submission to count
		}
		return s.answered(t, rep)
	}
	host = hostOf(t.URL)
	if t.Joined() {
		return s.joinRemote(t, trigger, host)
	}
	// The same URL queued or running here already: one audit for both.
	if local := s.pool.byURL(t.URL); local != nil {
		s.pool.release()
		s.count(trigger, outcomeJoined, host, local.id)
		return submission{id: local.id, run: local, joined: true}, nil
	}
	r := &run{id: t.ID, url: t.URL, host: host, trigger: trigger, ticket: t,
		queued: s.cfg.Now(), done: make(chan struct{}), position: s.pool.position()}
	s.steps.watch(t)
	// Before the run can start, so that its steps come after this entry.
	if err := s.cfg.Auditor.Queued(ctx, t, r.position); err != nil {
		s.cfg.Logger.Warn("record queued audit", "id", t.ID, "host", host, "error", err)
	}
	// Counted, not logged: the audit's own line comes when it ends.
	s.metrics.submissions.WithLabelValues(string(trigger), outcomeQueued).Inc()
	if !s.pool.enqueue(r) {
		// Shutdown began during Submit: nothing was charged; end the run
		// so that its progress entry goes.
		s.pool.release()
		s.finishRun(s.pool.stop, r)
		return submission{}, queueRefusal(errStopping)
	}
	return submission{id: t.ID, run: r}, nil
}

// joinRemote follows a running audit another instance (or this one) holds.
func (s *Server) joinRemote(t *audit.Ticket, trigger audit.Trigger, host string) (submission, error) {
	s.count(trigger, outcomeJoined, host, t.ID)
	if local := s.pool.lookup(t.ID); local != nil {
		s.pool.release()
		return submission{id: t.ID, run: local, joined: true}, nil
	}
	r := &run{id: t.ID, url: t.URL, host: host, trigger: trigger, ticket: t,
		queued: s.cfg.Now(), done: make(chan struct{}), remote: true}
	if !s.pool.wait(r, s.finishRun) {
		s.pool.release()
		return submission{}, queueRefusal(errStopping)
	}
	return submission{id: t.ID, run: r, joined: true}, nil
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

// finishRun runs or joins r's audit on a worker and records how it ended.
func (s *Server) finishRun(ctx context.Context, r *run) {
	rep, err := s.cfg.Auditor.Finish(ctx, r.ticket)
	s.steps.done(r.id)
	r.mu.Lock()
	r.report, r.err = rep, err
	r.mu.Unlock()
	if r.remote {
		return // counted as joined; the audit ran elsewhere
	}
	outcome := outcomeFailed
	if rep != nil {
		outcome = string(rep.Status)
		s.metrics.observe(rep)
		if rep.Status.Ran() {
			s.durations.add(time.Duration(rep.DurationMS) * time.Millisecond)
		}
	}
	s.metrics.audits.WithLabelValues(string(r.trigger), outcome).Inc()
	s.logAudit(r.id, r.host, r.trigger, outcome, rep)
	if err != nil {
		s.cfg.Logger.Warn("finish audit", "id", r.id, "host", r.host, "error", err)
	}
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
