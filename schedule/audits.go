package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"lekta.dev/lekta/audit"
)

// ErrQueueFull: the shared queue holds QueueLimit audits waiting to start;
// a submission is refused (503 with Retry-After) rather than queued.
var ErrQueueFull = errors.New("the audit queue is full")

// Priorities in QueueAudits (River runs the lowest number first): public
// submissions, then members' run-now, then scheduled re-audits.
const (
	priorityPublic    = 1
	priorityMember    = 2
	priorityScheduled = 3
)

// waitingStates are the states in which a job is an audit still to run or
// running: the unique states of an audit job (a URL queued or running
// twice is one job), and what Enqueue counts.
var waitingStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}

// AuditArgs is one submitted audit waiting in the shared queue: unique by
// URL while it waits or runs, so that a second submission of the URL joins
// it.
type AuditArgs struct {
	// ID is the report id, which the submitter already holds.
	ID      string `json:"id"`
	URL     string `json:"url" river:"unique"`
	Trigger string `json:"trigger"`
}

// Kind is River's name for the job.
func (AuditArgs) Kind() string { return "lekta_audit" }

// InsertOpts puts public audits first in the audits queue. Attempts are
// for the store failing before the audit started; an audit that started
// is never run twice.
func (AuditArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAudits, Priority: priorityPublic, MaxAttempts: 5,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: waitingStates}}
}

// Enqueued is the queue's answer to one submission.
type Enqueued struct {
	// ID is the report id the audit runs under: the submission's own, or
	// that of the same URL's audit already queued, which it joined.
	ID     string
	Joined bool
	// Position is the audit's place among the public audits waiting to
	// start, by their start times (1 is next).
	Position int
}

// Enqueue queues a submitted audit to start at at (the start the host's
// windows reserved for it), unless the same URL's audit is queued or
// running already, which it then joins. ErrQueueFull when QueueLimit
// public audits wait.
func (s *Scheduler) Enqueue(ctx context.Context, a AuditArgs, at time.Time) (Enqueued, error) {
	return retryLost(ctx, s, func() (Enqueued, error) { return s.enqueue(ctx, a, at) })
}

// retryLost runs one queue operation. After a database restart the pool
// may still hold connections the server closed; each fails once and is
// dropped, and the next try takes another, up to a fresh one. Only
// operations that may run twice use it: reads, and inserts of jobs unique
// by their arguments.
func retryLost[T any](ctx context.Context, s *Scheduler, op func() (T, error)) (T, error) {
	var (
		v   T
		err error
	)
	for range max(s.tries, 1) {
		v, err = op()
		if err == nil || !connLost(err) || ctx.Err() != nil {
			break
		}
	}
	return v, err
}

// connLost reports whether err means that the connection, not the
// statement, failed: the server ended it (shut down, restarted, or an
// administrator's pg_terminate_backend) or it broke before an answer.
func connLost(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P01" || pe.Code == "57P02" // admin_shutdown, crash_shutdown
	}
	return pgconn.SafeToRetry(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (s *Scheduler) enqueue(ctx context.Context, a AuditArgs, at time.Time) (Enqueued, error) {
	waiting, err := s.client.JobList(ctx, river.NewJobListParams().Kinds(AuditArgs{}.Kind()).Queues(QueueAudits).
		States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable).
		OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(s.cfg.QueueLimit))
	if err != nil {
		return Enqueued{}, fmt.Errorf("read the audit queue: %w", err)
	}
	if len(waiting.Jobs) >= s.cfg.QueueLimit {
		return Enqueued{}, ErrQueueFull
	}
	opts := a.InsertOpts()
	// The job is available from now and taken at its start
	// (readyAtStart), by any instance, leader or not.
	if at.After(s.cfg.Now()) {
		opts.ScheduledAt = at
	}
	res, err := s.client.Insert(ctx, a, &opts)
	if err != nil {
		return Enqueued{}, fmt.Errorf("queue audit %s: %w", a.ID, err)
	}
	if res.UniqueSkippedAsDuplicate {
		var got AuditArgs
		if err := json.Unmarshal(res.Job.EncodedArgs, &got); err != nil || got.ID == "" {
			return Enqueued{}, fmt.Errorf("read the queued audit of %s: %v", a.URL, err)
		}
		if got.ID != a.ID {
			return Enqueued{ID: got.ID, Joined: true}, nil
		}
		// An earlier try queued it and its answer was lost; this try's
		// list of waiting jobs holds it, and it does not wait behind itself.
	}
	pos := 1
	for _, j := range waiting.Jobs {
		if j.ID != res.Job.ID && !j.ScheduledAt.After(at) {
			pos++
		}
	}
	return Enqueued{ID: a.ID, Position: pos}, nil
}

// Waiting is what the queue knows of an audit not yet reported.
type Waiting struct {
	URL string
	// Running: an instance took it; else it waits for StartsAt.
	Running  bool
	StartsAt time.Time
}

// Find looks for the audit id among the jobs still to run or running, for
// an instance asked about an audit whose progress entry has gone (its
// instance stopped, and River has not rescued the job yet).
func (s *Scheduler) Find(ctx context.Context, id string) (Waiting, bool, error) {
	res, err := retryLost(ctx, s, func() (*river.JobListResult, error) {
		return s.client.JobList(ctx, river.NewJobListParams().Kinds(AuditArgs{}.Kind()).Queues(QueueAudits).
			States(waitingStates...).Where("args->>'id' = @id", river.NamedArgs{"id": id}).First(1))
	})
	if err != nil {
		return Waiting{}, false, fmt.Errorf("find audit %s: %w", id, err)
	}
	if len(res.Jobs) == 0 {
		return Waiting{}, false, nil
	}
	j := res.Jobs[0]
	var a AuditArgs
	if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
		return Waiting{}, false, fmt.Errorf("find audit %s: %w", id, err)
	}
	return Waiting{URL: a.URL, Running: j.State == rivertype.JobStateRunning, StartsAt: j.ScheduledAt}, true, nil
}

// auditWorker runs one queued audit on this instance's renderers.
type auditWorker struct {
	river.WorkerDefaults[AuditArgs]
	s *Scheduler
}

// Timeout bounds the job: the audit's hard limit plus the time to store it.
func (w *auditWorker) Timeout(*river.Job[AuditArgs]) time.Duration { return w.s.cfg.JobTimeout }

func (w *auditWorker) Work(ctx context.Context, job *river.Job[AuditArgs]) error {
	req := audit.Request{URL: job.Args.URL, ID: job.Args.ID, Trigger: audit.Trigger(job.Args.Trigger)}
	if _, ok := startedBefore(job.JobRow); ok {
		// Its instance stopped while it ran: the site was contacted, and
		// running it again would contact it twice for one submission.
		// Its answer needs the store only: an outage puts it off.
		_, err := w.s.runner.Lost(ctx, req)
		return w.s.orPutOff(job.JobRow, err)
	}
	req.OnStart = w.s.markStarted(job.JobRow, req.ID)
	rep, err := w.s.runner.Run(ctx, req)
	return w.s.outcome(ctx, job.JobRow, rep, err)
}

// outcome turns a run's answer into the job's: put off while the limits
// say wait, the instance stops or an outage refused the start; retried
// by River for another failure before the audit started; done otherwise.
func (s *Scheduler) outcome(ctx context.Context, job *rivertype.JobRow, rep *audit.Report, err error) error {
	var ny *audit.NotYet
	switch {
	case errors.As(err, &ny):
		// A snooze keeps the attempt number: the start recorded for it
		// reads as not started.
		return river.JobSnooze(max(ny.Until.Sub(s.cfg.Now()), 0))
	case err == nil, rep != nil:
		return nil // it ran (its report may not have been stored: never twice)
	}
	// It did not start (the store failed before the admission, or a
	// joined audit was abandoned): the retry may run it.
	s.unmarkStarted(job)
	if ctx.Err() != nil {
		return river.JobSnooze(0) // stopping before it started: run it elsewhere
	}
	return s.orPutOff(job, err)
}

// started is the output a job records just before its audit's admission,
// and so before its first request to the site: which attempt started it.
type started struct {
	ReportID  string    `json:"report_id,omitempty"`
	Attempt   int       `json:"attempt,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
}

// markStarted records in the job, durably, that this attempt starts its
// audit now, so that a job rescued from a dead instance (a later attempt)
// is never run again.
func (s *Scheduler) markStarted(job *rivertype.JobRow, reportID string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := s.client.JobUpdate(ctx, job.ID, &river.JobUpdateParams{
			Output: started{ReportID: reportID, Attempt: job.Attempt, StartedAt: s.cfg.Now().UTC()}})
		if err != nil {
			return fmt.Errorf("record the start of %s: %w", reportID, err)
		}
		return nil
	}
}

// unmarkStarted clears the record of an attempt that did not start its
// audit after all, so that River's retry runs it.
func (s *Scheduler) unmarkStarted(job *rivertype.JobRow) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.client.JobUpdate(ctx, job.ID, &river.JobUpdateParams{Output: started{}}); err != nil {
		s.cfg.Logger.Warn("clear the start of a job", "job", job.ID, "error", err)
	}
}

// startedBefore reports whether an earlier attempt of the job started its
// audit (one its instance never finished: River rescued the job and this
// is a later attempt; a snooze keeps the attempt number), and the report
// id it ran under.
func startedBefore(j *rivertype.JobRow) (string, bool) {
	st, ok := recordedStart(j)
	if !ok || st.Attempt >= j.Attempt {
		return "", false
	}
	return st.ReportID, true
}

// recordedStart is the start recorded in the job (markStarted); false
// when none is.
func recordedStart(j *rivertype.JobRow) (started, bool) {
	out := j.Output()
	if len(out) == 0 {
		return started{}, false
	}
	var st started
	if json.Unmarshal(out, &st) != nil || st.ReportID == "" {
		return started{}, false
	}
	return st, true
}

// Depth is how many public audits wait to start in the shared queue, all
// instances together, counted up to QueueLimit.
func (s *Scheduler) Depth(ctx context.Context) (int, error) {
	res, err := retryLost(ctx, s, func() (*river.JobListResult, error) {
		return s.client.JobList(ctx, river.NewJobListParams().Kinds(AuditArgs{}.Kind()).Queues(QueueAudits).
			States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable).First(s.cfg.QueueLimit))
	})
	if err != nil {
		return 0, fmt.Errorf("read the audit queue: %w", err)
	}
	return len(res.Jobs), nil
}
