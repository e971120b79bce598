package schedule

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/records"
)

// busyRunner holds every audit it runs until release is closed, whatever
// its context says, as a renderer busy with a long page; it notes the
// lost audits it answers.
type busyRunner struct {
	release chan struct{}
	mu      sync.Mutex
	lost    []audit.Request
}

func (r *busyRunner) Run(ctx context.Context, req audit.Request) (*audit.Report, error) {
	<-r.release
	return &audit.Report{ID: req.ID, URL: req.URL, Status: audit.StatusComplete, Trigger: req.Trigger}, nil
}

func (r *busyRunner) Lost(ctx context.Context, req audit.Request) (*audit.Report, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost = append(r.lost, req)
	return &audit.Report{ID: req.ID, URL: req.URL, Status: audit.StatusError, Reason: audit.LostReason(req.Trigger), Trigger: req.Trigger}, nil
}

func (r *busyRunner) answered() []audit.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]audit.Request(nil), r.lost...)
}

// TestLostAuditAnsweredWithoutARenderer: an audit whose instance stopped
// while it ran is answered lost soon after RescueAfter, although every
// renderer of the living instances is busy; its job is cancelled, never
// run again.
func TestLostAuditAnsweredWithoutARenderer(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := &busyRunner{release: make(chan struct{})}
			s, db := startScheduler(t, engine, Config{Renderers: 1, JobTimeout: time.Second, RescueAfter: 2 * time.Second}, r)
			defer close(r.release) // before the scheduler stops
			if _, err := s.Enqueue(ctx, AuditArgs{ID: "busy1", URL: "https://busy.example/"}, time.Now()); err != nil {
				t.Fatal(err)
			}
			waitJobState(t, s, "busy1", 10*time.Second, rivertype.JobStateRunning)
			if _, err := s.Enqueue(ctx, AuditArgs{ID: "lost1", URL: "https://lost.example/"}, time.Now()); err != nil {
				t.Fatal(err)
			}
			// A member's run-now, queued behind it too.
			m, _, err := db.AddMember(ctx, "lost@example.com", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			site, err := db.AddSite(ctx, records.Site{MemberID: m.ID, URL: "https://member.example/", Schedule: "daily"}, 10, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			entry, err := s.RunNow(ctx, site.ID, time.Now(), MemberRun{})
			if err != nil {
				t.Fatal(err)
			}
			// Both jobs as a killed instance leaves them: running, their
			// start recorded a minute ago.
			lostRunning(t, s, jobOf(t, s, "lost1").ID, "lost1")
			lostRunning(t, s, reauditJob(t, s, site.ID).ID, "lostrun")

			for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				got := r.answered()
				if len(got) < 2 {
					continue
				}
				byID := map[string]audit.Trigger{}
				for _, q := range got {
					byID[q.ID] = q.Trigger
				}
				if len(got) != 2 || byID["lost1"] != "" || byID["lostrun"] != audit.TriggerMember {
					t.Fatalf("lost answers %+v, want lost1 (a submission) and lostrun (a member's run-now) once each", got)
				}
				waitJobCancelled(t, s, "lost1")
				if done, err := db.HasEntry(ctx, entry); err != nil || !done {
					t.Errorf("the lost run-now has no history entry %s (%v)", entry, err)
				}
				return
			}
			t.Fatalf("lost answers %+v within 20 s, want 2; job %s", r.answered(), jobOf(t, s, "lost1").State)
		})
	}
}

// lostRunning makes the job id as its killed instance leaves it: running,
// the start of reportID recorded a minute ago.
func lostRunning(t *testing.T, s *Scheduler, id int64, reportID string) {
	t.Helper()
	if _, err := s.client.JobUpdate(context.Background(), id, &river.JobUpdateParams{
		Output: started{ReportID: reportID, Attempt: 1, StartedAt: time.Now().Add(-time.Minute).UTC()}}); err != nil {
		t.Fatal(err)
	}
	setRunning(t, s, id)
}

// reauditJob is the re-audit job of the site.
func reauditJob(t *testing.T, s *Scheduler, siteID string) *rivertype.JobRow {
	t.Helper()
	res, err := s.client.JobList(context.Background(), river.NewJobListParams().Kinds(ReauditArgs{}.Kind()).
		Where("args->>'site_id' = @id", river.NamedArgs{"id": siteID}).First(1))
	if err != nil || len(res.Jobs) == 0 {
		t.Fatalf("no re-audit job of %s (%v)", siteID, err)
	}
	return res.Jobs[0]
}

// setRunning makes the job id running on attempt 1, as an instance that
// took it and was killed leaves it.
func setRunning(t *testing.T, s *Scheduler, id int64) {
	t.Helper()
	execRiver(t, s, "UPDATE river_job SET state = 'running', attempt = 1 WHERE id = ?",
		"UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1", id)
}

// execRiver runs one statement on the queue's tables: sqlite's text on the
// SQLite queue, pg's on PostgreSQL.
func execRiver(t *testing.T, s *Scheduler, sqlite, pg string, args ...any) {
	t.Helper()
	if s.cfg.DatabaseURL == "" {
		if _, err := s.SQLite().Exec(sqlite, args...); err != nil {
			t.Fatal(err)
		}
		return
	}
	conn, err := pgx.Connect(context.Background(), s.cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), pg, args...); err != nil {
		t.Fatal(err)
	}
}

// waitJobCancelled waits for the job of report id to be cancelled, or to
// carry River's cancel request (a running job of a dead instance is
// cancelled by River's rescue).
func waitJobCancelled(t *testing.T, s *Scheduler, id string) {
	t.Helper()
	var j *rivertype.JobRow
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		j = jobOf(t, s, id)
		if j.State == rivertype.JobStateCancelled || strings.Contains(string(j.Metadata), "cancel_attempted_at") {
			return
		}
	}
	t.Fatalf("job of %s answered lost but not cancelled: %s, metadata %s", id, j.State, j.Metadata)
}
