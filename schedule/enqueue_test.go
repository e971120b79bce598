package schedule

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lekta.dev/lekta/policy"
)

// TestEnqueueAfterConnectionsEnded: PostgreSQL ends every connection the
// queue holds (as a restart or an administrator does); the next
// submissions are queued, none refused, each once.
func TestEnqueueAfterConnectionsEnded(t *testing.T) {
	ctx := context.Background()
	db, rc := openBenchDB(t, "postgres")
	g, _ := policy.NewGuard(policy.GuardConfig{})
	s, err := New(ctx, Config{Records: db, DatabaseURL: rc.DatabaseURL, Guard: g})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	// Fill the pool with connections, all at once.
	var wg sync.WaitGroup
	for i := range s.tries {
		wg.Go(func() {
			if _, err := s.Enqueue(ctx, AuditArgs{ID: fmt.Sprintf("warm%d", i), URL: fmt.Sprintf("https://warm%d.example/", i)}, time.Now()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	admin, err := pgx.Connect(ctx, rc.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var ended int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&ended); err != nil || ended == 0 {
		t.Fatalf("ended %d connections: %v", ended, err)
	}
	for i := range s.tries {
		a := AuditArgs{ID: fmt.Sprintf("after%d", i), URL: fmt.Sprintf("https://after%d.example/", i)}
		e, err := s.Enqueue(ctx, a, time.Now())
		if err != nil {
			t.Fatalf("submission %d after the connections ended: %v", i, err)
		}
		if e.ID != a.ID || e.Joined {
			t.Errorf("submission %d: %+v, want its own job", i, e)
		}
	}
	var jobs int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE args->>'url' LIKE 'https://after%'`).Scan(&jobs); err != nil || jobs != s.tries {
		t.Errorf("%d jobs queued after the connections ended, want %d (%v)", jobs, s.tries, err)
	}
}
