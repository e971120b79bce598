package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/records"
)

// newRedisHarnessAt returns a factory of stores on the Redis at url, each
// with its own key prefix, test clock and archive from newArchive.
func newRedisHarnessAt(url string, raw redis.UniversalClient, cluster bool, newArchive func(testing.TB) *records.DB) factory {
	return func(t *testing.T, l Limits, poll time.Duration) harness {
		t.Helper()
		clock := newTestClock()
		prefix := redistest.Prefix(t, raw)
		// The suite checks semantics; a generous CallTimeout keeps a loaded
		// machine from turning into ErrUnavailable. The Redis-down and pause
		// tests use the production default.
		archive := newArchive(t)
		open := func(t *testing.T, l Limits) *RedisStore {
			s, err := NewRedisStore(bg, url, archive, l, RedisOptions{Prefix: prefix, Cluster: cluster, Clock: clock.Now,
				PollInterval: poll, CallTimeout: 2 * time.Second})
			if err != nil {
				t.Fatalf("NewRedisStore: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}
		s := open(t, l)
		return harness{
			Store:     s,
			clock:     clock,
			reportTTL: l.CacheTTL,
			ttls:      func(tb testing.TB) map[string]time.Duration { return redisTTLs(tb, raw, prefix) },
			waiters: func(tb testing.TB, host, id string) int {
				n, err := raw.PubSubNumSub(bg, s.keys.done(host, id)).Result()
				if err != nil {
					tb.Fatalf("pubsub numsub: %v", err)
				}
				return int(n[s.keys.done(host, id)])
			},
			reopen: func(t *testing.T, l Limits) Store { return open(t, l) },
		}
	}
}

// TestSQLiteRedisContract runs the suite on hot state in Redis with the
// reports in a SQLite file: --redis-url alone.
func TestSQLiteRedisContract(t *testing.T) {
	t.Parallel()
	url, raw := redistest.Shared(t)
	runStoreContract(t, newRedisHarnessAt(url, raw, false, sqliteArchive))
}

// TestPostgresRedisContract runs the suite on hot state in Redis with the
// reports in PostgreSQL: the scale-out deployment.
func TestPostgresRedisContract(t *testing.T) {
	t.Parallel()
	url, raw := redistest.Shared(t)
	runStoreContract(t, newRedisHarnessAt(url, raw, false, postgresArchive))
}

// TestRedisClusterContract runs the whole suite through a cluster client
// against a one-node Redis Cluster: every script touching keys of two slots
// would fail with CROSSSLOT.
func TestRedisClusterContract(t *testing.T) {
	t.Parallel()
	p := startCluster(t)
	runStoreContract(t, newRedisHarnessAt(p.URL(), p.Client(t), true, sqliteArchive))
}

// TestRedisCluster3Contract runs the whole suite on a Redis Cluster of
// three masters, each owning a third of the slots: every host's keys live
// on one of them, reports on any.
func TestRedisCluster3Contract(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	runStoreContract(t, newRedisHarnessAt(c.URL(), c.Client(t), true, sqliteArchive))
}

// startCluster starts a private one-node Redis Cluster owning every slot.
func startCluster(tb testing.TB) *redistest.Private {
	tb.Helper()
	p := redistest.StartPrivate(tb, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-announce-ip", "127.0.0.1")
	c := p.Client(tb)
	if err := c.Do(bg, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err(); err != nil {
		tb.Fatalf("cluster addslotsrange: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := c.ClusterInfo(bg).Result()
		if err == nil && containsLine(info, "cluster_state:ok") {
			return p
		}
		if time.Now().After(deadline) {
			tb.Fatalf("cluster never became ok: %v %s", err, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func containsLine(s, line string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// TestRedisServerTime runs decisions on Redis TIME, as production does.
func TestRedisServerTime(t *testing.T) {
	t.Parallel()
	lim := Defaults()
	lim.Typical = 80 * time.Second
	s, raw := sharedStore(t, lim)
	l := mustAdmit(t, s, urlA, "id1")
	a, err := s.Admit(bg, urlB, "id2")
	if err != nil || a.Decision != Refused || a.Reason != ReasonConcurrency ||
		a.RetryAfter <= 70*time.Second || a.RetryAfter > 80*time.Second {
		t.Fatalf("Admit on a busy host = %+v, %v; want refused for concurrency, about 80s (Typical)", a, err)
	}
	mustComplete(t, s, l, "report-a", false)
	e, ok, err := s.Lookup(bg, urlA)
	if err != nil || !ok || e.ID != "id1" || e.Age < 0 || e.Age > time.Minute {
		t.Fatalf("Lookup = %+v, %v, %v; want id1 with a small age", e, ok, err)
	}
	now, err := raw.Time(bg).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := now.Sub(e.CompletedAt); d < 0 || d > time.Minute {
		t.Fatalf("CompletedAt %v is not Redis time %v", e.CompletedAt, now)
	}
	a, err = s.Admit(bg, urlB, "id2")
	if err != nil || a.Decision != Refused || a.Reason != "1/1m" || a.RetryAfter <= 0 || a.RetryAfter > time.Minute {
		t.Fatalf("Admit after completion = %+v, %v; want refused by 1/1m", a, err)
	}
}

// countCommands counts the commands a client sends, retries included.
type countCommands struct{ n atomic.Int64 }

func (c *countCommands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *countCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *countCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// TestRedisOneRoundTrip checks that each decision and each cache read is a
// single command once the scripts are loaded, and that a report by id is
// read from the archive without any.
func TestRedisOneRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := sharedStore(t, Defaults())
	run(t, s, urlA, "warm") // loads the scripts
	var c countCommands
	s.client.AddHook(&c)
	cases := []struct {
		name string
		call func() error
	}{
		{"admit admitted", func() error { _, err := s.Admit(bg, urlOther, "x1"); return err }},
		{"admit refused", func() error { _, err := s.Admit(bg, urlB, "x2"); return err }},
		{"admit cached", func() error { _, err := s.Admit(bg, urlA, "x3"); return err }},
		{"admit in flight", func() error { _, err := s.Admit(bg, urlOther, "x4"); return err }},
		{"lookup hit", func() error { _, _, err := s.Lookup(bg, urlA); return err }},
		{"lookup miss", func() error { _, _, err := s.Lookup(bg, urlB); return err }},
		{"report", func() error { _, err := s.Report(bg, "warm"); return err }},
	}
	for _, tc := range cases {
		want := int64(1)
		if tc.name == "report" {
			want = 0
		}
		before := c.n.Load()
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n := c.n.Load() - before; n != want {
			t.Errorf("%s sent %d commands, want %d", tc.name, n, want)
		}
	}
}

// TestRedisDown stops a private Redis mid-run: every call fails closed with
// ErrUnavailable within the promised 5 seconds (but a report by id is still
// read from the archive), and the same store works again once Redis is back
// on its address, without a restart.
func TestRedisDown(t *testing.T) {
	t.Parallel()
	p, s, setup := privateStores(t)
	run(t, setup, urlA, "before")
	held := mustAdmit(t, setup, urlOther, "held")

	p.Kill()
	calls := []struct {
		name string
		call func() error
	}{
		{"admit", func() error { _, err := s.Admit(bg, urlB, "down1"); return err }},
		{"lookup", func() error { _, _, err := s.Lookup(bg, urlA); return err }},
		{"wait", func() error { _, err := s.Wait(bg, urlOther, "held"); return err }},
		{"complete", func() error { return s.Complete(bg, held, Outcome{Report: []byte("r")}) }},
		{"ping", func() error { return s.Ping(bg) }},
	}
	for round := range 2 { // the second round meets go-redis's dial back-off state
		for _, c := range calls {
			err := within(t, 5*time.Second, c.name+" with Redis down", c.call)
			if !isUnavailable(err) {
				t.Fatalf("round %d: %s with Redis down: %v, want ErrUnavailable", round, c.name, err)
			}
		}
	}
	if _, err := NewRedisStore(bg, p.URL(), sqliteArchive(t), Defaults(), RedisOptions{}); !isUnavailable(err) {
		t.Fatalf("NewRedisStore with Redis down: %v, want ErrUnavailable", err)
	}
	if e, err := s.Report(bg, "before"); err != nil || string(e.Report) != "report-before" {
		t.Fatalf("Report with Redis down = %+v, %v; want it from the archive", e, err)
	}

	p.Start(t) // back, empty (no persistence), on the same port
	if a := eventually(t, s, urlB, "after"); a.Decision != Admitted {
		t.Fatalf("Admit after Redis came back = %+v, want admitted", a)
	}
}

// privateStores starts a private Redis and opens two stores on it sharing
// one test clock and one archive: s has the production call timeout and is
// the store under test; setup has a generous one, so preparing state is not
// the thing under test on a loaded machine.
func privateStores(t *testing.T) (p *redistest.Private, s, setup *RedisStore) {
	t.Helper()
	p = redistest.StartPrivate(t)
	clock := newTestClock()
	archive := sqliteArchive(t)
	return p, newPrivateStore(t, p, archive, clock, DefaultCallTimeout), newPrivateStore(t, p, archive, clock, 2*time.Second)
}

// newPrivateStore is a store on a private server with the default prefix.
func newPrivateStore(t *testing.T, p *redistest.Private, archive Archive, clock *testClock, timeout time.Duration) *RedisStore {
	t.Helper()
	s, err := NewRedisStore(bg, p.URL(), archive, Defaults(), RedisOptions{Clock: clock.Now, PollInterval: fastPoll, CallTimeout: timeout})
	if err != nil {
		t.Fatalf("NewRedisStore: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// eventually retries Admit while the store is unavailable, for up to 15 s,
// and returns the first real decision.
func eventually(t *testing.T, s Store, url, id string) Admission {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		a, err := s.Admit(bg, url, id)
		if err == nil {
			return a
		}
		if !isUnavailable(err) || time.Now().After(deadline) {
			t.Fatalf("Admit(%s, %s) never answered: %v", url, id, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRedisPaused stalls a private Redis with CLIENT PAUSE ALL: decisions
// time out as ErrUnavailable within 5 seconds, nothing is admitted, and once
// the pause ends a retry with the same id is admitted exactly once.
func TestRedisPaused(t *testing.T) {
	t.Parallel()
	p, s, setup := privateStores(t)
	run(t, setup, urlOther, "warm")
	// Under PAUSE ALL even CLIENT UNPAUSE waits, so the pause is short and
	// the stalled calls run side by side well inside it.
	p.Pause(t, 3*time.Second)
	calls := map[string]func() error{
		"admit":  func() error { _, err := s.Admit(bg, urlA, "paused"); return err },
		"lookup": func() error { _, _, err := s.Lookup(bg, urlOther); return err },
		"ping":   func() error { return s.Ping(bg) },
	}
	errs := make(chan error, len(calls))
	for name, call := range calls {
		go func() {
			err := call()
			if !isUnavailable(err) {
				err = fmt.Errorf("%s while paused: %v, want ErrUnavailable", name, err)
			} else {
				err = nil
			}
			errs <- err
		}()
	}
	for range calls {
		if err := within(t, 5*time.Second, "a call while paused", func() error { return <-errs }); err != nil {
			t.Error(err)
		}
	}
	// Wait out the pause: this UNPAUSE itself is held until the pause ends.
	p.Unpause(t)
	ran := p.Client(t).ZScore(bg, s.keys.lease("shop.example"), "paused").Err() == nil
	t.Logf("the timed-out admission ran after the pause: %v", ran)
	// Idempotent whether or not the timed-out call ran.
	if a := eventually(t, s, urlA, "paused"); a.Decision != Admitted {
		t.Fatalf("Admit after the pause = %+v, want admitted", a)
	}
	wantRefused(t, setup, urlB, "other", time.Minute, "1/1m")
}

func TestNewRedisStoreErrors(t *testing.T) {
	t.Parallel()
	closed := "redis://127.0.0.1:" + strconv.Itoa(redistest.FreePort(t))
	bad := Defaults()
	bad.Windows = nil
	cases := []struct {
		name        string
		url         string
		limits      Limits
		opts        RedisOptions
		unavailable bool
	}{
		{"nothing listening", closed, Defaults(), RedisOptions{}, true},
		{"not a redis url", "http://127.0.0.1:6379", Defaults(), RedisOptions{}, false},
		{"brace in prefix", closed, Defaults(), RedisOptions{Prefix: "a{b}:"}, false},
		{"invalid limits", closed, bad, RedisOptions{}, false},
		{"cluster url garbage", "redis://127.0.0.1:1?bogus=1", Defaults(), RedisOptions{Cluster: true}, false},
		{"unparsable url with password", "redis://u:s3cret@[::1", Defaults(), RedisOptions{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := within(t, 5*time.Second, "NewRedisStore", func() error {
				s, err := NewRedisStore(bg, tc.url, sqliteArchive(t), tc.limits, tc.opts)
				if s != nil {
					_ = s.Close()
				}
				return err
			})
			if err == nil {
				t.Fatal("NewRedisStore succeeded")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error shows the password: %v", err)
			}
			if got := errors.Is(err, ErrUnavailable); got != tc.unavailable {
				t.Fatalf("NewRedisStore: %v; ErrUnavailable %v, want %v", err, got, tc.unavailable)
			}
		})
	}
}

// TestRedisClusterSlotMigration runs admissions of one host from three
// stores (three instances) on a three-master cluster while the host's slot
// moves to another master: afterwards the host's starts, as the store
// recorded them, are exactly the admissions answered Admitted (none lost,
// none doubled), and no two are closer than the 1 s window. Calls made
// while the slot moves may fail closed (ErrUnavailable); none may admit
// what the window forbids.
func TestRedisClusterSlotMigration(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	raw := c.Client(t)
	prefix := redistest.Prefix(t, raw)
	l := Defaults()
	l.Windows = []Window{{N: 1, Per: time.Second}, {N: 1000, Per: time.Hour}}
	var stores []*RedisStore
	for range 3 {
		s, err := NewRedisStore(bg, c.URL(), sqliteArchive(t), l, RedisOptions{Prefix: prefix, Cluster: true, CallTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores = append(stores, s)
	}
	slot := redistest.Slot("{shop.example}")
	var mu sync.Mutex
	admitted, unavailable := 0, 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s := stores[g%3]
				id := fmt.Sprintf("g%d-%d", g, i)
				a, err := s.Admit(bg, fmt.Sprintf("https://shop.example/p%d-%d", g, i), id)
				mu.Lock()
				switch {
				case err != nil && errors.Is(err, ErrUnavailable):
					unavailable++
				case err != nil:
					t.Errorf("admit: %v", err)
				case a.Decision == Admitted:
					admitted++
				}
				mu.Unlock()
				if err == nil && a.Decision == Admitted {
					if err := s.Complete(bg, a.Lease, Outcome{Report: []byte("r")}); err != nil && !errors.Is(err, ErrUnavailable) {
						t.Errorf("complete: %v", err)
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	time.Sleep(2500 * time.Millisecond)
	c.MoveSlot(t, slot, (c.Owner(slot)+1)%3)
	time.Sleep(2500 * time.Millisecond)
	close(stop)
	wg.Wait()
	starts, err := raw.ZRangeWithScores(bg, prefix+"{shop.example}:starts", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(starts) != admitted {
		t.Errorf("the store recorded %d starts for %d admissions answered Admitted", len(starts), admitted)
	}
	for i := 1; i < len(starts); i++ {
		if gap := time.Duration(starts[i].Score-starts[i-1].Score) * time.Millisecond; gap < time.Second {
			t.Errorf("starts %d and %d are %s apart, want at least the 1 s window", i-1, i, gap)
		}
	}
	if admitted < 3 {
		t.Errorf("only %d admissions in 5 s of a 1 s window", admitted)
	}
	t.Logf("%d admitted, %d failed closed while the slot moved", admitted, unavailable)
}
