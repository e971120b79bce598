// Package redistest gives tests real Redis servers: the shared test Redis,
// with a key prefix of each test's own that is cleaned up when the test
// ends, and private redis-servers a test may kill, pause and restart
// without disturbing anyone else. Only tests import it.
//
// A test that needs Redis fails when the environment variable CI is set and
// Redis is missing, and skips with a message saying so otherwise.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultURL is the shared test Redis when LEKTA_TEST_REDIS_URL is unset:
// the one make test starts.
const DefaultURL = "redis://127.0.0.1:6379/0"

// SharedURL returns the URL of the shared test Redis: LEKTA_TEST_REDIS_URL,
// or DefaultURL.
func SharedURL() string {
	if u := os.Getenv("LEKTA_TEST_REDIS_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Shared checks that the shared test Redis answers and returns its URL and
// a raw client to it, closed when the test ends. Without an answer the test
// fails under CI and is skipped otherwise. The database is shared with other
// tests and engineers: use keys under a Prefix, and never flush it.
func Shared(tb testing.TB) (url string, raw *redis.Client) {
	tb.Helper()
	url = SharedURL()
	o, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatalf("parse LEKTA_TEST_REDIS_URL: %v", err)
	}
	raw = redis.NewClient(o)
	tb.Cleanup(func() { _ = raw.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := raw.Ping(ctx).Err(); err != nil {
		missing(tb, "no Redis answers at %s: %v (make test starts one; LEKTA_TEST_REDIS_URL names another)", o.Addr, err)
	}
	return url, raw
}

// Prefix returns a fresh key prefix ("lekta-test:<random hex>:") and
// deletes every key under it from raw's database when the test ends. It
// never flushes the database.
func Prefix(tb testing.TB, raw redis.UniversalClient) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "lekta-test:" + hex.EncodeToString(b[:]) + ":"
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, k := range Keys(tb, raw, prefix) {
			if err := raw.Unlink(ctx, k).Err(); err != nil {
				tb.Logf("cleanup: unlink %s: %v", k, err)
			}
		}
	})
	return prefix
}

// Keys lists the keys under prefix, prefix included, in no particular
// order. A failed SCAN marks the test failed and returns what it found.
func Keys(tb testing.TB, raw redis.UniversalClient, prefix string) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	scan := func(ctx context.Context, c *redis.Client) []string {
		var keys []string
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			tb.Errorf("scan %s*: %v", prefix, err)
		}
		return keys
	}
	cl, ok := raw.(*redis.ClusterClient)
	if !ok {
		return scan(ctx, raw.(*redis.Client))
	}
	var mu sync.Mutex
	var keys []string
	err := cl.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		found := scan(ctx, c)
		mu.Lock()
		keys = append(keys, found...)
		mu.Unlock()
		return nil
	})
	if err != nil {
		tb.Errorf("scan the cluster's masters: %v", err)
	}
	return keys
}

// missing fails the test under CI and skips it otherwise: a part the test
// needs is not there.
func missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s (CI is set, so this fails instead of skipping)", msg)
	}
	tb.Skipf("%s; skipping (set CI to make this a failure)", msg)
}
