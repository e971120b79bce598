package records

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// newsSink notes what Follow tells it.
type newsSink struct {
	mu      sync.Mutex
	signals []string
	alls    int
}

func (s *newsSink) Signal(id string) { s.mu.Lock(); s.signals = append(s.signals, id); s.mu.Unlock() }
func (s *newsSink) All()             { s.mu.Lock(); s.alls++; s.mu.Unlock() }
func (s *newsSink) Waiting() bool    { return true }

func (s *newsSink) seen() ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.signals), s.alls
}

// putUntilHeard stores reports through w until sink heard of one (Follow
// may not listen yet when the first is stored), and returns the ids put.
func putUntilHeard(t *testing.T, w *DB, sink *newsSink, heard func([]string, int) bool) []string {
	t.Helper()
	var put []string
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		id := fmt.Sprintf("NEWS%012d", len(put))
		now := time.Now()
		if err := w.PutReport(bg, id, []byte(`{}`), false, now, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		put = append(put, id)
		if heard(sink.seen()) {
			return put
		}
	}
	signals, alls := sink.seen()
	t.Fatalf("stored %d reports; the follower heard signals %v and %d wake-alls", len(put), signals, alls)
	return nil
}

// TestFollowHearsAnotherProcess: a report stored by another process (its
// own DB on the same database) reaches a follower: on PostgreSQL by its
// id (NOTIFY), on SQLite as a change of the file that wakes every waiter.
// A PostgreSQL listener whose connection was ended listens again and
// wakes every waiter, since what was sent meanwhile is lost.
func TestFollowHearsAnotherProcess(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			c := e.config(t)
			writer, follower := mustOpen(t, c), mustOpen(t, c)
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			sink := &newsSink{}
			go follower.Follow(ctx, sink)
			if e.name == "sqlite" {
				putUntilHeard(t, writer, sink, func(_ []string, alls int) bool { return alls > 0 })
				return
			}
			put := putUntilHeard(t, writer, sink, func(s []string, _ int) bool { return len(s) > 0 })
			if signals, _ := sink.seen(); !slices.Contains(put, signals[0]) {
				t.Fatalf("the follower heard %q, want one of the ids stored %v", signals[0], put)
			}
			if _, err := writer.SQL().ExecContext(bg, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE datname = current_database() AND query = 'LISTEN `+reportsChannel+`' AND pid <> pg_backend_pid()`); err != nil {
				t.Fatal(err)
			}
			_, before := sink.seen()
			putUntilHeard(t, writer, sink, func(_ []string, alls int) bool { return alls > before })
		})
	}
}
