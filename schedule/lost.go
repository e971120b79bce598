package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"lekta.dev/lekta/audit"
)

// lostInterval is how often the leader looks for lost audits: a lost
// audit is answered within RescueAfter and about this much more.
const lostInterval = 5 * time.Second

// lostArgs is the leader's periodic job that answers lost audits.
type lostArgs struct{}

func (lostArgs) Kind() string { return "lekta_lost" }

func (lostArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueOther, MaxAttempts: 1}
}

// lostWorker answers the audits whose instance stopped while they ran,
// outside the audits queue: the answer needs the store, not a renderer,
// so it never waits behind the queue.
type lostWorker struct {
	river.WorkerDefaults[lostArgs]
	s *Scheduler
}

func (w *lostWorker) Work(ctx context.Context, _ *river.Job[lostArgs]) error {
	_, err := w.s.AnswerLost(ctx)
	return err
}

// AnswerLost answers every lost audit of the queue and returns how many:
// a job that started its audit (its start is recorded) and is still
// running RescueAfter later, so its instance stopped, or that River
// rescued and has not handed to a renderer yet. Each gets its lost
// report (and, for a re-audit, its history entry), and its job is
// cancelled: it never runs again.
func (s *Scheduler) AnswerLost(ctx context.Context) (int, error) {
	res, err := s.client.JobList(ctx, river.NewJobListParams().Kinds(AuditArgs{}.Kind(), ReauditArgs{}.Kind()).
		Queues(QueueAudits).States(rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateAvailable).
		// Waiting audits are available too (readyAtStart), their starts
		// ahead: the earliest first, so a long queue never hides a lost one.
		OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(1000))
	if err != nil {
		return 0, fmt.Errorf("look for lost audits: %w", err)
	}
	answered := 0
	var errs []error
	for _, j := range res.Jobs {
		st, ok := s.lost(j)
		if !ok {
			continue
		}
		if err := s.answerLost(ctx, j, st); err != nil {
			errs = append(errs, err)
			continue
		}
		answered++
	}
	return answered, errors.Join(errs...)
}

// lost reports whether the job j is a lost audit (see AnswerLost): the
// start recorded in it is its current attempt's (a snooze takes back
// the attempt, so a snoozed job's start reads as later than its
// attempt; a job taken after River's rescue has a later attempt, and
// its worker answers), and it is no longer running, or has run for
// longer than any audit may. It returns that start.
func (s *Scheduler) lost(j *rivertype.JobRow) (started, bool) {
	st, ok := recordedStart(j)
	if !ok || st.Attempt != j.Attempt {
		return started{}, false
	}
	return st, j.State != rivertype.JobStateRunning || s.cfg.Now().Sub(st.StartedAt) > s.cfg.RescueAfter
}

// answerLost stores the answer of the lost job j, whose recorded start is
// st, then cancels it.
func (s *Scheduler) answerLost(ctx context.Context, j *rivertype.JobRow, st started) error {
	switch j.Kind {
	case AuditArgs{}.Kind():
		var a AuditArgs
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
			return fmt.Errorf("lost job %d: %w", j.ID, err)
		}
		if _, err := s.runner.Lost(ctx, audit.Request{URL: a.URL, ID: a.ID, Trigger: audit.Trigger(a.Trigger)}); err != nil {
			return fmt.Errorf("answer lost audit %s: %w", a.ID, err)
		}
	case ReauditArgs{}.Kind():
		var a ReauditArgs
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
			return fmt.Errorf("lost job %d: %w", j.ID, err)
		}
		d, ok, err := s.dueReaudit(ctx, a)
		if err == nil && ok {
			err = s.recordLost(ctx, d, st.ReportID)
		}
		if err != nil {
			return fmt.Errorf("answer lost re-audit of %s: %w", a.SiteID, err)
		}
	}
	if _, err := s.client.JobCancel(ctx, j.ID); err != nil && !errors.Is(err, river.ErrNotFound) {
		return fmt.Errorf("cancel lost job %d: %w", j.ID, err)
	}
	s.cfg.Logger.Warn("lost audit answered", "job", j.ID, "kind", j.Kind, "report", st.ReportID)
	return nil
}
