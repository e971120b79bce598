package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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

// redisURL is the shared test Redis: LEKTA_TEST_REDIS_URL or the local default.
func redisURL() string {
	if u := os.Getenv("LEKTA_TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// missing fails the test under CI and skips it otherwise.
func missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s (CI is set, so this fails instead of skipping)", msg)
	}
	tb.Skipf("%s; skipping (set CI to make this a failure)", msg)
}

// mustRedis returns the URL of the shared test Redis after checking that it
// answers, and a raw client to it for inspection.
func mustRedis(tb testing.TB) (string, *redis.Client) {
	tb.Helper()
	u := redisURL()
	o, err := redis.ParseURL(u)
	if err != nil {
		tb.Fatalf("parse LEKTA_TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(o)
	tb.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		missing(tb, "no Redis answers at %s: %v", o.Addr, err)
	}
	return u, c
}

// uniquePrefix returns a fresh key prefix and deletes its keys at cleanup.
// It never flushes the database: other tests and engineers share it.
func uniquePrefix(tb testing.TB, raw *redis.Client) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "lekta-test:" + hex.EncodeToString(b[:]) + ":"
	tb.Cleanup(func() { deleteKeys(tb, raw, prefix) })
	return prefix
}

func deleteKeys(tb testing.TB, raw *redis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, k := range scanKeys(tb, ctx, raw, prefix) {
		if err := raw.Unlink(ctx, k).Err(); err != nil {
			tb.Logf("cleanup: unlink %s: %v", k, err)
		}
	}
}

func scanKeys(tb testing.TB, ctx context.Context, raw *redis.Client, prefix string) []string {
	tb.Helper()
	var keys []string
	iter := raw.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		tb.Errorf("scan %s*: %v", prefix, err)
	}
	return keys
}

// redisTTLs lists the keys under prefix (prefix removed) and their TTLs; a
// key without a TTL is reported as -1.
func redisTTLs(tb testing.TB, raw *redis.Client, prefix string) map[string]time.Duration {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := make(map[string]time.Duration)
	for _, k := range scanKeys(tb, ctx, raw, prefix) {
		ttl, err := raw.PTTL(ctx, k).Result()
		if err != nil {
			tb.Fatalf("pttl %s: %v", k, err)
		}
		out[strings.TrimPrefix(k, prefix)] = ttl
	}
	return out
}

// redisProc is a private redis-server a test may stop, pause and restart
// without touching the shared one.
type redisProc struct {
	port  int
	dir   string
	extra []string
	cmd   *exec.Cmd
}

// startRedisProc starts a private redis-server on a free port, with no
// persistence, in a temporary directory; it is killed at cleanup.
func startRedisProc(tb testing.TB, extra ...string) *redisProc {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		missing(tb, "redis-server is not installed: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("find a free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	p := &redisProc{port: port, dir: tb.TempDir(), extra: extra}
	p.start(tb)
	tb.Cleanup(func() { p.stop(tb) })
	return p
}

func (p *redisProc) addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

func (p *redisProc) url() string { return "redis://" + p.addr() }

// start runs the server on its port and waits until it answers PING.
func (p *redisProc) start(tb testing.TB) {
	tb.Helper()
	args := append([]string{
		"--port", strconv.Itoa(p.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", p.dir, "--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning",
		"--logfile", filepath.Join(p.dir, "redis.log"),
	}, p.extra...)
	p.cmd = exec.Command("redis-server", args...)
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: p.addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(p.dir, "redis.log"))
			tb.Fatalf("private redis-server on %s did not answer: %v\n%s", p.addr(), err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills the server as a crash would and waits for it to exit.
func (p *redisProc) stop(tb testing.TB) {
	tb.Helper()
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}

// client returns a raw client to the private server.
func (p *redisProc) client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: p.addr()})
	tb.Cleanup(func() { _ = c.Close() })
	return c
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
