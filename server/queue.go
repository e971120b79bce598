package server

import (
	"context"
	"errors"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// errStopping: the server is shutting down and takes no new audits.
var errStopping = errors.New("the server is shutting down")

// shuttingDown is the cause running audits are cancelled with when the
// shutdown's grace period ends.
var shuttingDown = &audit.CancelError{Reason: "the service was shutting down"}

// Queue is the durable queue every audit waits in, shared by every
// instance; *schedule.Scheduler implements it, on River.
type Queue interface {
	// Enqueue queues a submitted audit to start at at, or joins the same
	// URL's audit already queued or running (schedule.ErrQueueFull when
	// the queue is full).
	Enqueue(ctx context.Context, a schedule.AuditArgs, at time.Time) (schedule.Enqueued, error)
	// Find looks for an audit still to run or running by its id.
	Find(ctx context.Context, id string) (schedule.Waiting, bool, error)
	// Depth is how many public audits wait to start.
	Depth(ctx context.Context) (int, error)
	// CheckSchedule refuses a schedule that is unreadable or more frequent
	// than the service's minimum interval.
	CheckSchedule(spec string) error
	// RunNow queues a member-triggered re-audit to start at run.StartsAt
	// and returns the id of its history entry.
	RunNow(ctx context.Context, siteID string, at time.Time, run schedule.MemberRun) (string, error)
	// RecordCached records a cached result as a member's run requested at
	// at, and returns its history entry.
	RecordCached(ctx context.Context, siteID string, at time.Time, rep *audit.Report) (records.Entry, error)
	// PendingRuns lists the site's run-now requests still waiting.
	PendingRuns(ctx context.Context, siteID string) ([]schedule.Pending, error)
	// Stop stops taking jobs and waits for the running ones, or for ctx.
	Stop(ctx context.Context) error
}

var (
	_ Queue                 = (*schedule.Scheduler)(nil)
	_ schedule.Runner       = (*Server)(nil)
	_ schedule.ReportReader = (*Server)(nil)
)

// Run runs an audit the queue handed this instance, on this goroutine: the
// queue's workers are the renderers. When the shutdown's grace period ends
// the audit is cancelled (status cancelled, or, if it had not started, put
// back in the queue for another instance). It implements schedule.Runner.
func (s *Server) Run(ctx context.Context, req audit.Request) (*audit.Report, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(s.halt, func() { cancel(context.Cause(s.halt)) })
	defer stop()
	s.running.Add(1)
	defer s.running.Add(-1)
	rep, err := s.cfg.Auditor.Run(ctx, req)
	var ny *audit.NotYet
	if errors.As(err, &ny) {
		return nil, err // not a run: the job waits
	}
	s.ended(req, rep, err)
	return rep, err
}

// Lost answers for an audit whose instance stopped while it ran; it
// implements schedule.Runner.
func (s *Server) Lost(ctx context.Context, req audit.Request) (*audit.Report, error) {
	rep, err := s.cfg.Auditor.Lost(ctx, req)
	s.ended(req, rep, err)
	return rep, err
}

// ended records how an audit of the queue ended, in the metrics and the
// one log line per audit.
func (s *Server) ended(req audit.Request, rep *audit.Report, err error) {
	s.cfg.Wake.Signal(req.ID) // its report is stored: its waiters read it now
	host := hostOf(req.URL)
	outcome := outcomeFailed
	if rep != nil {
		outcome = string(rep.Status)
		switch {
		case rep.Cached:
			// Not a submission answered from the cache (those count in
			// lekta_cache_hits_total where they are answered): a queued
			// audit or a re-audit that a fresh result answered.
			outcome = outcomeCached
		case rep.Joined:
			outcome = outcomeJoined
		case audit.IsLost(rep):
			outcome = outcomeLost
		default:
			s.metrics.observe(rep)
			if rep.Status.Ran() {
				s.durations.add(time.Duration(rep.DurationMS) * time.Millisecond)
			}
		}
	}
	s.metrics.audits.WithLabelValues(string(req.Trigger), outcome).Inc()
	s.logAudit(req.ID, host, req.Trigger, outcome, rep)
	if err != nil {
		s.cfg.Logger.Warn("audit", "id", req.ID, "host", host, "error", err)
	}
}

// StoredReport returns a stored report (audit.ErrNotFound once it expired),
// for a scheduled re-audit's conditional fetch.
func (s *Server) StoredReport(ctx context.Context, id string) (*audit.Report, error) {
	return s.cfg.Auditor.Report(ctx, id)
}
