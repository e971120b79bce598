package cache

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/records"
)

// t0 is where every test clock starts: a realistic unix-ms value.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testClock is a settable clock shared by a store and its test.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: t0} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t0+d.
func (c *testClock) Set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t0.Add(d)
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// sharedStore opens a RedisStore enforcing l on the shared test Redis,
// under a key prefix of the test's own and on Redis TIME, as production
// runs; raw is a client to the same database. The CallTimeout is generous
// so that a loaded machine does not turn into ErrUnavailable.
func sharedStore(tb testing.TB, l Limits) (s *RedisStore, raw *redis.Client) {
	tb.Helper()
	url, raw := redistest.Shared(tb)
	s, err := NewRedisStore(bg, url, sqliteArchive(tb), l, RedisOptions{Prefix: redistest.Prefix(tb, raw), CallTimeout: 2 * time.Second})
	if err != nil {
		tb.Fatalf("NewRedisStore: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s, raw
}

// redisTTLs lists the keys under prefix (prefix removed) and their TTLs; a
// key without a TTL is reported as -1.
func redisTTLs(tb testing.TB, raw redis.UniversalClient, prefix string) map[string]time.Duration {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := make(map[string]time.Duration)
	for _, k := range redistest.Keys(tb, raw, prefix) {
		ttl, err := raw.PTTL(ctx, k).Result()
		if err != nil {
			tb.Fatalf("pttl %s: %v", k, err)
		}
		out[strings.TrimPrefix(k, prefix)] = ttl
	}
	return out
}

// within runs f and fails the test if it has not returned after limit. It
// guards promises such as "fails closed in under 5 seconds"; the time it
// logs is information, not an assertion.
func within[T any](tb testing.TB, limit time.Duration, what string, f func() T) T {
	tb.Helper()
	done := make(chan T, 1)
	start := time.Now()
	go func() { done <- f() }()
	select {
	case v := <-done:
		tb.Logf("%s returned after %s", what, time.Since(start).Round(time.Millisecond))
		return v
	case <-time.After(limit):
		tb.Fatalf("%s did not return within %s", what, limit)
	}
	panic("unreachable")
}

// isUnavailable reports whether err says the store could not answer.
func isUnavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// sqliteArchive opens a records database, a real SQLite file in a
// temporary directory, migrated as at start-up.
func sqliteArchive(tb testing.TB) *records.DB {
	tb.Helper()
	return openRecords(tb, records.Config{DataDir: tb.TempDir()})
}

// postgresArchive opens a records database of the test's own on the
// package's throw-away PostgreSQL cluster.
func postgresArchive(tb testing.TB) *records.DB {
	tb.Helper()
	return openRecords(tb, records.Config{DatabaseURL: pgtest.Database(tb)})
}

func openRecords(tb testing.TB, c records.Config) *records.DB {
	tb.Helper()
	db, err := records.Open(bg, c)
	if err != nil {
		tb.Fatalf("open records: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}
