package schedule

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"lekta.dev/lekta/audit"
)

// orderRunner notes which audits ran, in order, and when each started.
type orderRunner struct {
	mu  sync.Mutex
	ids []string
	at  map[string]time.Time
}

func (r *orderRunner) Run(ctx context.Context, req audit.Request) (*audit.Report, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, req.ID)
	r.at[req.ID] = time.Now()
	return &audit.Report{ID: req.ID, URL: req.URL, Status: audit.StatusComplete}, nil
}

func (r *orderRunner) Lost(ctx context.Context, req audit.Request) (*audit.Report, error) {
	return nil, nil
}

func (r *orderRunner) ran() ([]string, map[string]time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...), r.at
}

// TestDueAuditsStartWithoutALeader: the elected leader was killed and its
// lease still holds, so no instance leads; audits whose starts come in
// the next seconds, near or further off, start at their times all the
// same, in the order of their reserved starts, and none before its start.
func TestDueAuditsStartWithoutALeader(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := &orderRunner{at: map[string]time.Time{}}
			s, _ := startSchedulerAfter(t, engine, Config{Renderers: 1}, r, func(s *Scheduler) {
				// A killed leader's row, as kill -9 leaves it: its lease
				// runs ten more minutes.
				execRiver(t, s, "INSERT INTO river_leader (leader_id, elected_at, expires_at, name) VALUES "+
					"('killed-instance', datetime('now', 'subsec'), datetime('now', '+10 minutes'), 'default')",
					"INSERT INTO river_leader (leader_id, elected_at, expires_at, name) VALUES "+
						"('killed-instance', now(), now() + interval '10 minutes', 'default')")
			})
			now := time.Now()
			// One host's audits, reserved in this order; the later two
			// further off than a snooze keeps a job available.
			starts := []struct {
				id string
				at time.Time
			}{{"near", now.Add(time.Second)}, {"later", now.Add(6 * time.Second)}, {"last", now.Add(7 * time.Second)}}
			for i := len(starts) - 1; i >= 0; i-- { // inserted last first: the order is the starts'
				a := starts[i]
				if _, err := s.Enqueue(ctx, AuditArgs{ID: a.id, URL: "https://one.example/" + a.id}, a.at); err != nil {
					t.Fatal(err)
				}
			}
			for _, a := range starts {
				if j := waitJobState(t, s, a.id, 30*time.Second, rivertype.JobStateCompleted); j.State != rivertype.JobStateCompleted {
					t.Fatalf("audit %s due %s never started without a leader: job %s", a.id, a.at.Format(time.StampMilli), j.State)
				}
			}
			ids, at := r.ran()
			if len(ids) != 3 || ids[0] != "near" || ids[1] != "later" || ids[2] != "last" {
				t.Errorf("audits ran in the order %v, want their reserved order [near later last]", ids)
			}
			for _, a := range starts {
				if at[a.id].Before(a.at) {
					t.Errorf("audit %s started at %s, before its reserved start %s", a.id,
						at[a.id].Format(time.StampMilli), a.at.Format(time.StampMilli))
				}
			}
			if leader := riverLeader(t, s); leader != "killed-instance" {
				t.Errorf("the leader is %q: the audits ran after a new election, not without a leader", leader)
			}
		})
	}
}

// riverLeader is the leader River's table names.
func riverLeader(t *testing.T, s *Scheduler) string {
	t.Helper()
	var id string
	if s.cfg.DatabaseURL == "" {
		if err := s.SQLite().QueryRow("SELECT leader_id FROM river_leader").Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	conn, err := pgx.Connect(context.Background(), s.cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), "SELECT leader_id FROM river_leader").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
