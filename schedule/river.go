package schedule

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// riverConfig is the River configuration: the queues, the workers, and the
// leader's periodic job.
func (s *Scheduler) riverConfig() (*river.Config, error) {
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &auditWorker{s: s}); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &reauditWorker{s: s}); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &planWorker{s: s}); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &webhookWorker{s: s}); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &lostWorker{s: s}); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	periodic := []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(lostInterval),
		func() (river.JobArgs, *river.InsertOpts) { return lostArgs{}, nil },
		&river.PeriodicJobOpts{ID: "lekta_lost"})}
	if s.cfg.Records != nil {
		periodic = append(periodic, river.NewPeriodicJob(river.PeriodicInterval(s.cfg.Tick),
			func() (river.JobArgs, *river.InsertOpts) { return planArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true, ID: "lekta_plan"}))
	}
	// A producer asks for jobs this often when no insert woke it (an
	// insert by another instance on SQLite, or a start whose time came).
	poll := min(250*time.Millisecond, s.cfg.Tick)
	return &river.Config{
		Queues: map[string]river.QueueConfig{
			QueueAudits: {MaxWorkers: s.cfg.Renderers},
			queueOther:  {MaxWorkers: 2},
		},
		Workers:              workers,
		PeriodicJobs:         periodic,
		JobTimeout:           s.cfg.JobTimeout,
		RescueStuckJobsAfter: s.cfg.RescueAfter,
		FetchPollInterval:    poll,
		// A job inserted while a renderer is free starts within a few
		// milliseconds: River's producer fetches on an insert's news (its
		// own, or PostgreSQL's NOTIFY) at most once per FetchCooldown,
		// 100 ms by default, which an API client waited through.
		FetchCooldown: fetchCooldown,
		Hooks:         []rivertype.Hook{&readyAtStart{}},
		// An audit's report and a re-audit's history entry are the record;
		// a finished job is not (a re-audit recorded already is never run
		// again, kept job or not), so River's cleaner drops it after an
		// hour instead of a day: at a million audits a day the job table
		// holds about 42,000 finished rows, not a million.
		CompletedJobRetentionPeriod: completedRetention,
		// River's producers report at info every few seconds; the service
		// logs one line per audit, so River speaks from warnings up.
		Logger: slog.New(warnOnly{s.cfg.Logger.Handler()}),
	}, nil
}

// warnOnly passes on records from warnings up.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}
func (w warnOnly) WithAttrs(a []slog.Attr) slog.Handler { return warnOnly{w.Handler.WithAttrs(a)} }
func (w warnOnly) WithGroup(n string) slog.Handler      { return warnOnly{w.Handler.WithGroup(n)} }
