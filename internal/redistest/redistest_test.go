package redistest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"lekta.dev/lekta/internal/redistest"
)

// TestPrefixCleanup: the keys under a test's prefix are listed by Keys and
// gone once that test ends; keys under another prefix stay.
func TestPrefixCleanup(t *testing.T) {
	t.Parallel()
	_, raw := redistest.Shared(t)
	ctx := context.Background()
	other := redistest.Prefix(t, raw)
	if err := raw.Set(ctx, other+"stays", "1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	var prefix string
	t.Run("owner", func(t *testing.T) {
		prefix = redistest.Prefix(t, raw)
		if prefix == other {
			t.Fatalf("two prefixes are both %q", prefix)
		}
		for _, k := range []string{"a", "b"} {
			if err := raw.Set(ctx, prefix+k, "1", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
		keys := redistest.Keys(t, raw, prefix)
		slices.Sort(keys)
		if want := []string{prefix + "a", prefix + "b"}; !slices.Equal(keys, want) {
			t.Errorf("Keys = %v, want %v", keys, want)
		}
	})
	if keys := redistest.Keys(t, raw, prefix); len(keys) != 0 {
		t.Errorf("keys left under %s after the test: %v", prefix, keys)
	}
	if keys := redistest.Keys(t, raw, other); len(keys) != 1 {
		t.Errorf("keys under the other prefix: %v, want the one set", keys)
	}
}

// TestPrivateLifecycle kills, restarts, pauses and stops a private server:
// it answers only while running and unpaused, and restarts empty on the
// same address.
func TestPrivateLifecycle(t *testing.T) {
	t.Parallel()
	p := redistest.StartPrivate(t)
	c := p.Client(t)
	ctx := context.Background()
	// probe fails fast instead of waiting out a pause or retrying a dial.
	probe := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = probe.Close() })
	answers := func() bool { return probe.Ping(ctx).Err() == nil }

	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("set on the started server: %v", err)
	}
	if o, err := redis.ParseURL(p.URL()); err != nil || o.Addr != p.Addr() {
		t.Errorf("URL %s does not name %s: %v", p.URL(), p.Addr(), err)
	}
	p.Kill()
	if answers() {
		t.Fatal("the server answers after Kill")
	}
	p.Start(t)
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Errorf("after the restart: exists k = %d, %v; want an empty server", n, err)
	}
	p.Pause(t, time.Second)
	if answers() {
		t.Error("the server answers while paused")
	}
	p.Unpause(t)
	if !answers() {
		t.Error("the server does not answer after Unpause")
	}
	p.Stop(t)
	if answers() {
		t.Error("the server answers after Stop")
	}
}
