package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// BenchmarkAPIReportByID measures GET /api/v1/audits/{id} through the
// handler for a report this process did not make, so that it is read from
// the records database: SQLite (the default) and PostgreSQL (hot state in
// Redis). It reports p50 and p99 per request; the report is a real one of
// 10 KiB.
func BenchmarkAPIReportByID(b *testing.B) {
	kinds := []struct {
		name string
		open func(b *testing.B) cache.Store
	}{
		{"sqlite", func(b *testing.B) cache.Store {
			db := benchRecords(b, records.Config{DataDir: b.TempDir()})
			s, err := cache.NewSQLiteStore(context.Background(), db.SQL(), db, cache.Defaults(), cache.SQLiteOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		}},
		{"postgres", func(b *testing.B) cache.Store {
			url, raw := redistest.Shared(b)
			db := benchRecords(b, records.Config{DatabaseURL: pgtest.Database(b)})
			s, err := cache.NewRedisStore(context.Background(), url, db, cache.Defaults(),
				cache.RedisOptions{Prefix: redistest.Prefix(b, raw), CallTimeout: 2 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
	for _, kind := range kinds {
		b.Run(kind.name, func(b *testing.B) {
			store := kind.open(b)
			id := seedReport(b, store)
			handler := benchServer(b, store).Handler()
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				rec := httptest.NewRecorder()
				handler.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/audits/"+id, nil))
				lat = append(lat, time.Since(start))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET report: %d %s", rec.Code, rec.Body)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

func benchRecords(b *testing.B, c records.Config) *records.DB {
	b.Helper()
	db, err := records.Open(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// seedReport stores a real report (the audit golden file of index.html)
// under a fresh id, as another process would, and returns the id.
func seedReport(b *testing.B, store cache.Store) string {
	b.Helper()
	raw := testsite.GoldenReports(b)["index.json"]
	r, err := audit.Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	r.ID = audit.NewID()
	body, err := r.Encode()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	a, err := store.Admit(ctx, r.URL, r.ID)
	if err != nil || a.Decision != cache.Admitted {
		b.Fatalf("admit: %+v, %v", a, err)
	}
	if err := store.Complete(ctx, a.Lease, cache.Outcome{Report: body}); err != nil {
		b.Fatal(err)
	}
	return r.ID
}

// benchServer is a Server over a real Auditor on store, with the stub
// renderer (nothing is audited).
func benchServer(b *testing.B, store cache.Store) *Server {
	b.Helper()
	guard, err := policy.NewGuard(policy.GuardConfig{})
	if err != nil {
		b.Fatal(err)
	}
	aud, err := audit.New(audit.Config{Guard: guard, Renderer: &stubRenderer{}, Store: store})
	if err != nil {
		b.Fatal(err)
	}
	q, err := schedule.New(context.Background(), schedule.Config{DataDir: b.TempDir(), Guard: guard, Renderers: 1})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(Config{Auditor: aud, Queue: q})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}
