package server

import (
	"context"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/schedule"
)

var (
	_ schedule.Runner       = (*Server)(nil)
	_ schedule.ReportReader = (*Server)(nil)
)

// Reaudit runs a scheduled or member-triggered re-audit on the server's
// renderers and per-host limits, the way a submission does, and waits for
// its report. Public audits come first: while every renderer is busy or
// public audits are waiting, it returns schedule.ErrBusy without asking the
// limiter, and the re-audit's job snoozes; likewise when the same URL's
// audit is already running. A refusal by the limiter or an
// answer from the cache comes back as the report (rate_limited, cached).
func (s *Server) Reaudit(ctx context.Context, req audit.Request) (*audit.Report, error) {
	if s.pool.active() >= s.cfg.Renderers {
		return nil, schedule.ErrBusy
	}
	if err := s.pool.reserve(); err != nil {
		return nil, schedule.ErrBusy
	}
	t, err := s.cfg.Auditor.Submit(ctx, req)
	if err != nil {
		s.pool.release()
		return nil, err
	}
	if rep := t.Ready(); rep != nil {
		s.pool.release()
		s.count(req.Trigger, outcomeOf(rep), hostOf(t.URL), rep.ID)
		return rep, nil
	}
	if t.Joined() {
		// The same URL is being audited (perhaps by an instance that
		// died, until its lease expires): waiting would hold a re-audit
		// worker; the job snoozes and runs on its own later.
		s.pool.release()
		return nil, schedule.ErrBusy
	}
	r := &run{id: t.ID, url: t.URL, host: hostOf(t.URL), trigger: req.Trigger, ticket: t,
		queued: s.cfg.Now(), done: make(chan struct{})}
	s.steps.watch(t)
	s.metrics.submissions.WithLabelValues(string(req.Trigger), outcomeQueued).Inc()
	if !s.pool.enqueue(r) {
		s.pool.release()
		s.finishRun(s.pool.stop, r)
		return nil, schedule.ErrBusy
	}
	// The run goes on when ctx ends (it holds the host's lease); its
	// report is stored as every audit's is.
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return r.result()
}

// outcomeOf names a report answered at submission for the metrics.
func outcomeOf(rep *audit.Report) string {
	if rep.Status == audit.StatusRateLimited {
		return outcomeRateLimited
	}
	return outcomeCached
}

// StoredReport returns a stored report (audit.ErrNotFound once it expired),
// for a scheduled re-audit's conditional fetch.
func (s *Server) StoredReport(ctx context.Context, id string) (*audit.Report, error) {
	return s.cfg.Auditor.Report(ctx, id)
}
