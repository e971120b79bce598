package schedule

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

// refusingRunner refuses the first refusals starts as a store outage
// does, then runs the audit.
type refusingRunner struct {
	refusals int32
	starts   atomic.Int32
}

func (r *refusingRunner) Run(ctx context.Context, req audit.Request) (*audit.Report, error) {
	if r.starts.Add(1) <= r.refusals {
		return nil, fmt.Errorf("admit %s: %w: connection refused", req.URL, cache.ErrUnavailable)
	}
	return &audit.Report{ID: req.ID, URL: req.URL, Status: audit.StatusComplete, Trigger: req.Trigger}, nil
}

func (r *refusingRunner) Lost(ctx context.Context, req audit.Request) (*audit.Report, error) {
	return nil, fmt.Errorf("no audit of %s is lost here", req.URL)
}

// TestOutageCountsNoAttempt: a store outage that refuses an accepted
// audit's start more often than River has attempts (5) puts the job off,
// never fails it; the audit runs once the store answers, on its first
// attempt, and its waits stay within OutageWait.
func TestOutageCountsNoAttempt(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := &refusingRunner{refusals: 7}
			s, _ := startScheduler(t, engine, Config{OutageWait: 100 * time.Millisecond}, r)
			if _, err := s.Enqueue(ctx, AuditArgs{ID: "outage1", URL: "https://outage.example/"}, time.Now()); err != nil {
				t.Fatal(err)
			}
			j := waitJobState(t, s, "outage1", 20*time.Second, rivertype.JobStateCompleted, rivertype.JobStateDiscarded)
			if j.State != rivertype.JobStateCompleted || j.Attempt != 1 || len(j.Errors) != 0 {
				t.Fatalf("%d starts refused; the audit never ran: job %s, attempt %d of %d, errors %d",
					r.refusals, j.State, j.Attempt, j.MaxAttempts, len(j.Errors))
			}
			if got := r.starts.Load(); got != r.refusals+1 {
				t.Errorf("the runner was asked %d times, want %d refusals and one run", got, r.refusals+1)
			}
		})
	}
}

func TestOutageWait(t *testing.T) {
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{0, time.Second}, {1, 2 * time.Second}, {5, 32 * time.Second}, {6, time.Minute}, {60, time.Minute}} {
		if got := outageWait(c.n, time.Minute); got != c.want {
			t.Errorf("outageWait(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}

// waitJobState polls the audit job of report id until it is in one of
// states, or fails the test after limit with its last state.
func waitJobState(t *testing.T, s *Scheduler, id string, limit time.Duration, states ...rivertype.JobState) *rivertype.JobRow {
	t.Helper()
	var last *rivertype.JobRow
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		last = jobOf(t, s, id)
		for _, st := range states {
			if last != nil && last.State == st {
				return last
			}
		}
	}
	if last == nil {
		t.Fatalf("no job of %s within %v", id, limit)
	}
	return last
}

// jobOf is the audit job of report id, nil when there is none.
func jobOf(t *testing.T, s *Scheduler, id string) *rivertype.JobRow {
	t.Helper()
	res, err := s.client.JobList(context.Background(), river.NewJobListParams().Kinds(AuditArgs{}.Kind()).
		Where("args->>'id' = @id", river.NamedArgs{"id": id}).First(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) == 0 {
		return nil
	}
	return res.Jobs[0]
}

// startScheduler starts a Scheduler with cfg on a fresh records database
// of engine (its River tables there too), working its jobs with r; it
// stops when t ends.
func startScheduler(t *testing.T, engine string, cfg Config, r Runner) (*Scheduler, *records.DB) {
	t.Helper()
	return startSchedulerAfter(t, engine, cfg, r, nil)
}

// startSchedulerAfter is startScheduler, with before run on the opened
// and migrated queue just before it starts.
func startSchedulerAfter(t *testing.T, engine string, cfg Config, r Runner, before func(*Scheduler)) (*Scheduler, *records.DB) {
	t.Helper()
	ctx := context.Background()
	db, rc := openBenchDB(t, engine)
	cfg.Records, cfg.DatabaseURL, cfg.DataDir = db, rc.DatabaseURL, rc.DataDir
	cfg.Guard, _ = policy.NewGuard(policy.GuardConfig{})
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(s)
	}
	if err := s.Start(ctx, r); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(ctx) })
	return s, db
}
