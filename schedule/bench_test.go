package schedule

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

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
		if _, err := tx.Exec(q, fmt.Sprintf("s_%08d", i), m.ID, fmt.Sprintf("https://h%d.example/", i%500), fmt.Sprintf("b%08d", i)); err != nil {
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
			rc := records.Config{DataDir: b.TempDir()}
			if engine == "postgres" {
				rc = records.Config{DatabaseURL: pgtest.Database(b)}
			}
			db, err := records.Open(ctx, rc)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
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
