package records

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var bg = context.Background()

// engine opens fresh, empty databases of one kind.
type engine struct {
	name   string
	config func(tb testing.TB) Config
}

var engines = []engine{
	{"sqlite", func(tb testing.TB) Config { return Config{DataDir: tb.TempDir()} }},
	{"postgres", func(tb testing.TB) Config { return Config{DatabaseURL: pgtest.Database(tb)} }},
}

func mustOpen(tb testing.TB, c Config) *DB {
	tb.Helper()
	db, err := Open(bg, c)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func TestMigrate(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			c := e.config(t)
			db := mustOpen(t, c)
			st, err := db.Status(bg)
			known, _ := Known(db.Kind())
			if err != nil || !st.Current() || st.Version != len(known) || len(st.Pending) != 0 {
				t.Fatalf("Status after Open = %+v, %v; want version %d, nothing pending", st, err, len(known))
			}
			// Opening again changes nothing.
			again, err := Connect(bg, c)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if applied, err := again.Migrate(bg); err != nil || len(applied) != 0 {
				t.Fatalf("second Migrate applied %v, %v; want nothing", applied, err)
			}
			var rows int
			if err := db.SQL().QueryRow("SELECT count(*) FROM schema_migrations").Scan(&rows); err != nil || rows != len(known) {
				t.Fatalf("schema_migrations has %d rows (%v), want %d", rows, err, len(known))
			}
		})
	}
}

// TestMigrateRace starts six migrations of one new database at once, as six
// `lekta audit` processes on a fresh machine do: each migration is applied
// exactly once and every opener succeeds.
func TestMigrateRace(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			c := e.config(t)
			var wg sync.WaitGroup
			var mu sync.Mutex
			applied := 0
			for range 6 {
				wg.Go(func() {
					db, err := Connect(bg, c)
					if err != nil {
						t.Errorf("Connect: %v", err)
						return
					}
					defer db.Close()
					ms, err := db.Migrate(bg)
					if err != nil {
						t.Errorf("Migrate: %v", err)
					}
					mu.Lock()
					applied += len(ms)
					mu.Unlock()
				})
			}
			wg.Wait()
			known, _ := Known(e.kind(t))
			if applied != len(known) {
				t.Fatalf("the six migrations applied %d migrations in all, want %d", applied, len(known))
			}
		})
	}
}

func (e engine) kind(tb testing.TB) Kind {
	if e.name == "postgres" {
		return PostgreSQL
	}
	return SQLite
}

// TestSchemaTooNew: a database migrated by a newer binary is refused with
// a clear error and not written to.
func TestSchemaTooNew(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			c := e.config(t)
			db := mustOpen(t, c)
			if _, err := db.SQL().Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 0)"); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, db)
			_, err := Open(bg, c)
			if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "version 99") {
				t.Fatalf("Open of a newer schema: %v, want ErrSchemaTooNew naming version 99", err)
			}
			if after := snapshot(t, db); after != before {
				t.Fatalf("the refused database changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// TestSchemaForeign: a migration recorded under another name (another
// build's schema) is refused.
func TestSchemaForeign(t *testing.T) {
	db := mustOpen(t, Config{DataDir: t.TempDir()})
	if _, err := db.SQL().Exec("UPDATE schema_migrations SET name = 'other' WHERE version = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(bg); err == nil || !strings.Contains(err.Error(), "another build") {
		t.Fatalf("Migrate of a foreign schema: %v, want a refusal", err)
	}
}

// snapshot describes a database's schema and migrations for comparison.
func snapshot(tb testing.TB, db *DB) string {
	tb.Helper()
	q := "SELECT type || ':' || name FROM sqlite_master ORDER BY 1"
	if db.Kind() == PostgreSQL {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"
	}
	var b strings.Builder
	for _, query := range []string{q, "SELECT version || ':' || name FROM schema_migrations ORDER BY version"} {
		rows, err := db.SQL().Query(query)
		if err != nil {
			tb.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				tb.Fatal(err)
			}
			b.WriteString(s + " ")
		}
		rows.Close()
	}
	return b.String()
}

func TestReports(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, e.config(t))
			if b, _, _, err := db.GetReport(bg, "nope", t0); err != nil || b != nil {
				t.Fatalf("GetReport of an unknown id = %q, %v; want nil, nil", b, err)
			}
			exp := t0.Add(time.Hour)
			if err := db.PutReport(bg, "r1", []byte("first"), false, t0, exp); err != nil {
				t.Fatal(err)
			}
			if err := db.PutReport(bg, "r1", []byte("second"), true, t0.Add(time.Second), exp); err != nil {
				t.Fatal(err)
			}
			if err := db.PutReport(bg, "r2", []byte("other"), false, t0, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			b, failed, at, err := db.GetReport(bg, "r1", exp.Add(-time.Millisecond))
			if err != nil || string(b) != "second" || !failed || !at.Equal(t0.Add(time.Second)) {
				t.Fatalf("GetReport before expiry = %q failed %v at %v, %v; want the replacement", b, failed, at, err)
			}
			if b, _, _, err := db.GetReport(bg, "r1", exp); err != nil || b != nil {
				t.Fatalf("GetReport at expiry = %q, %v; want none", b, err)
			}
			n, err := db.Sweep(bg, t0.Add(time.Minute))
			if err != nil || n != 1 {
				t.Fatalf("Sweep = %d, %v; want r2 deleted", n, err)
			}
			if b, _, _, _ := db.GetReport(bg, "r1", t0); !bytes.Equal(b, []byte("second")) {
				t.Fatalf("the sweep deleted a live report: %q", b)
			}
		})
	}
}

// TestSweepBatches deletes more expired reports than one batch holds.
func TestSweepBatches(t *testing.T) {
	db := mustOpen(t, Config{DataDir: t.TempDir()})
	t0 := time.UnixMilli(1_000_000)
	for i := range 1234 {
		if err := db.PutReport(bg, "r"+time.Duration(i).String(), []byte("x"), false, t0, t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.Sweep(bg, t0.Add(time.Second)); err != nil || n != 1234 {
		t.Fatalf("Sweep = %d, %v; want 1234", n, err)
	}
}
