package schedule

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openBenchDB opens a fresh records database of engine ("sqlite" in a
// temporary data dir, or "postgres" in a throw-away cluster) with its
// configuration; it is closed when tb ends.
func openBenchDB(tb testing.TB, engine string) (*records.DB, records.Config) {
	tb.Helper()
	rc := records.Config{DataDir: tb.TempDir()}
	if engine == "postgres" {
		rc = records.Config{DatabaseURL: pgtest.Database(tb)}
	}
	db, err := records.Open(context.Background(), rc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db, rc
}

// seedSites stores n daily sites of one member in one transaction.
func seedSites(tb testing.TB, db *records.DB, n int) {
	tb.Helper()
	ctx := context.Background()
	m, _, err := db.AddMember(ctx, "bench@example.com", time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	q := "INSERT INTO sites (id, member_id, url, schedule, badge_token, created_at, updated_at) VALUES (?, ?, ?, 'daily', ?, 0, 0)"
	if db.Kind() == records.PostgreSQL {
		q = "INSERT INTO sites (id, member_id, url, schedule, badge_token, created_at, updated_at) VALUES ($1, $2, $3, 'daily', $4, 0, 0)"
	}
	for i := range n {
		if _, err := tx.Exec(q, fmt.Sprintf("s_%08d", i), m.ID, fmt.Sprintf("https://h%d.example/p%d", i%500, i), fmt.Sprintf("b%08d", i)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkEnqueue10000 is the time River takes to receive 10,000 saved
// sites' due re-audits from the leader's plan (each a unique job), on
// River's SQLite driver and on PostgreSQL. Every op plans a fresh day so
// that no job is a duplicate.
func BenchmarkEnqueue10000(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			ctx := context.Background()
			db, rc := openBenchDB(b, engine)
			seedSites(b, db, 10000)
			g, _ := policy.NewGuard(policy.GuardConfig{})
			day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			s, err := New(ctx, Config{Records: db, DatabaseURL: rc.DatabaseURL, DataDir: rc.DataDir, Guard: g,
				Tick: 12 * time.Hour, Now: func() time.Time { return day }})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Stop(ctx)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				day = time.Date(2026, 12, 1+i, 12, 0, 0, 0, time.UTC)
				n, err := s.Plan(ctx, false)
				if err != nil || n != 10000 {
					b.Fatalf("Plan = %d, %v", n, err)
				}
			}
		})
	}
}

// overheadRunner answers every re-audit at once with a complete report and
// keeps, per call, the time from River's claim of the job to the call.
type overheadRunner struct {
	got chan time.Duration
}

func (r overheadRunner) Lost(ctx context.Context, req audit.Request) (*audit.Report, error) {
	return nil, errors.New("no job is lost in this benchmark")
}

func (r overheadRunner) Run(ctx context.Context, req audit.Request) (*audit.Report, error) {
	claimed, ok := ClaimedAt(ctx)
	if !ok {
		return nil, errors.New("no claim time in the job's context")
	}
	r.got <- time.Since(claimed)
	return &audit.Report{ID: req.ID, URL: req.URL, Status: audit.StatusComplete, Trigger: req.Trigger}, nil
}

// BenchmarkSchedulerOverhead is what the scheduler adds to a re-audit: from
// River's claim of the job to the start of Runner.Run (reading the site,
// its member, whether the due time is recorded and the previous entry), on
// River's SQLite driver and on PostgreSQL. The render lane is stubbed; one
// run-now job at a time; p50 and p99 are reported.
func BenchmarkSchedulerOverhead(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			ctx := context.Background()
			db, rc := openBenchDB(b, engine)
			const sites = 50
			seedSites(b, db, sites)
			g, _ := policy.NewGuard(policy.GuardConfig{})
			s, err := New(ctx, Config{Records: db, DatabaseURL: rc.DatabaseURL, DataDir: rc.DataDir, Guard: g})
			if err != nil {
				b.Fatal(err)
			}
			r := overheadRunner{got: make(chan time.Duration, 1)}
			if err := s.Start(ctx, r); err != nil {
				b.Fatal(err)
			}
			defer s.Stop(ctx)
			var overheads []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := s.RunNow(ctx, fmt.Sprintf("s_%08d", i%sites), time.Now().Add(time.Duration(i)*time.Millisecond), MemberRun{}); err != nil {
					b.Fatal(err)
				}
				select {
				case d := <-r.got:
					overheads = append(overheads, d)
				case <-time.After(30 * time.Second):
					b.Fatalf("re-audit %d did not start within 30 s", i)
				}
			}
			b.StopTimer()
			slices.Sort(overheads)
			b.ReportMetric(float64(overheads[len(overheads)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(overheads[len(overheads)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
