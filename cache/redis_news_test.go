package cache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"lekta.dev/lekta/internal/redistest"
)

// newsSink notes what Follow tells it.
type newsSink struct {
	mu      sync.Mutex
	signals []string
	alls    int
}

func (s *newsSink) Signal(id string) { s.mu.Lock(); s.signals = append(s.signals, id); s.mu.Unlock() }
func (s *newsSink) All()             { s.mu.Lock(); s.alls++; s.mu.Unlock() }

func (s *newsSink) seen() ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.signals), s.alls
}

// TestRedisFollowHearsEveryInstance: the reports another instance
// completes reach a follower by their ids, on one pattern subscription;
// when its connection is killed it subscribes again and wakes every
// waiter, since what was published meanwhile is lost.
func TestRedisFollowHearsEveryInstance(t *testing.T) {
	t.Parallel()
	url, raw := redistest.Shared(t)
	prefix := redistest.Prefix(t, raw)
	// The follower's connections carry a name of their own, so that the
	// test kills its subscription and no other test's.
	name := fmt.Sprintf("lekta-follow-test-%d", time.Now().UnixNano())
	follower, err := NewRedisStore(bg, withClientName(url, name), sqliteArchive(t), Defaults(), RedisOptions{Prefix: prefix, CallTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	other, err := NewRedisStore(bg, url, sqliteArchive(t), Defaults(), RedisOptions{Prefix: prefix, CallTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	sink := &newsSink{}
	go follower.Follow(ctx, sink)
	n := 0
	complete := func() string {
		n++
		id := fmt.Sprintf("NEWS%012d", n)
		l := mustAdmit(t, other, fmt.Sprintf("https://news%d.example/", n), id)
		if err := other.Complete(bg, l, Outcome{Report: []byte(`{"id":"` + id + `"}`)}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	var put []string
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		put = append(put, complete())
		if s, _ := sink.seen(); len(s) > 0 {
			if !slices.Contains(put, s[0]) {
				t.Fatalf("the follower heard %q, want one of %v", s[0], put)
			}
			break
		}
		if time.Now().After(end) {
			t.Fatalf("completed %d audits; the follower heard nothing", len(put))
		}
	}
	// Kill the follower's pattern subscription.
	if n := killClients(t, raw, name, " psub=1 "); n != 1 {
		t.Fatalf("killed %d subscriptions of the follower, want 1", n)
	}
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, alls := sink.seen(); alls > 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the follower's connection was killed; it never woke every waiter after subscribing again")
		}
	}
	id := complete()
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if s, _ := sink.seen(); slices.Contains(s, id) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("after subscribing again the follower did not hear %s", id)
		}
	}
}

// withClientName adds go-redis's client_name option to a redis:// URL:
// every connection of the client then carries name in CLIENT LIST.
func withClientName(url, name string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "client_name=" + name
}

// killClients kills the connections named name whose CLIENT LIST line
// holds has, and returns how many it killed.
func killClients(t *testing.T, raw *redis.Client, name, has string) int {
	t.Helper()
	list, err := raw.ClientList(bg).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(line, " name="+name+" ") || !strings.Contains(line, has) {
			continue
		}
		for _, f := range strings.Fields(line) {
			if id, ok := strings.CutPrefix(f, "id="); ok {
				if err := raw.Do(bg, "CLIENT", "KILL", "ID", id).Err(); err != nil {
					t.Fatal(err)
				}
				n++
			}
		}
	}
	return n
}
