package cache

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/records"
)

// benchStore is a store under benchmark; cmds counts Redis commands (nil
// for the memory store).
type benchStore struct {
	name string
	s    Store
	cmds *countCommands
}

// benchStores returns a memory store on the real clock, a SQLite store on
// a real file and a Redis store on Redis TIME, as production runs them.
func benchStores(b *testing.B, l Limits) []benchStore {
	b.Helper()
	m, err := NewMemoryStore(l, nil)
	if err != nil {
		b.Fatal(err)
	}
	out := []benchStore{{name: "memory", s: m}, {name: "sqlite", s: benchSQLite(b, b.TempDir(), l)}}
	s, _ := sharedStore(b, l)
	c := &countCommands{}
	s.client.AddHook(c)
	return append(out, benchStore{name: "redis", s: s, cmds: c})
}

// benchSQLite opens a SQLite store on the file in dir with the real clock.
func benchSQLite(tb testing.TB, dir string, l Limits) *SQLiteStore {
	tb.Helper()
	db := openRecords(tb, records.Config{DataDir: dir})
	s, err := NewSQLiteStore(bg, db.SQL(), db, l, SQLiteOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// measure runs op b.N times, timing each call, and reports the median and
// 99th percentile latency and, for Redis, commands per operation.
func measure(b *testing.B, bs benchStore, op func(i int) error) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	var before int64
	if bs.cmds != nil {
		before = bs.cmds.n.Load()
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	if bs.cmds != nil {
		b.ReportMetric(float64(bs.cmds.n.Load()-before)/float64(len(lat)), "cmds/op")
	}
}

// churnLimits let a host be admitted again a few milliseconds later, so the
// admitted benchmark can cycle through a bounded set of hosts: each decision
// still expires a lease, counts two windows and records a start.
func churnLimits() Limits {
	l := Defaults()
	l.Windows = []Window{{N: 1, Per: time.Millisecond}, {N: 5, Per: 5 * time.Millisecond}}
	l.LeaseTTL = time.Millisecond
	return l
}

// BenchmarkAdmit measures one admission decision: admitted, refused (a busy
// host), and cached (a fresh result for the URL).
func BenchmarkAdmit(b *testing.B) {
	const hosts = 20000
	for _, bs := range benchStores(b, churnLimits()) {
		b.Run(bs.name+"/admitted", func(b *testing.B) {
			var waitedOut int
			measure(b, bs, func(i int) error {
				a, err := bs.s.Admit(bg, fmt.Sprintf("https://h%d.bench/", i%hosts), fmt.Sprintf("a%d", i))
				if err == nil && a.Decision == Refused {
					waitedOut++ // the cycle came round within a few ms
				} else if err == nil && a.Decision != Admitted {
					err = fmt.Errorf("decision %s", a.Decision)
				}
				return err
			})
			if waitedOut > 0 {
				b.Logf("%d decisions refused: host cycle shorter than the windows", waitedOut)
			}
		})
	}
	for _, bs := range benchStores(b, Defaults()) {
		mustAdmit(b, bs.s, "https://busy.bench/running", "busy-running")
		run(b, bs.s, "https://cached.bench/", "cached")
		b.Run(bs.name+"/refused", func(b *testing.B) {
			measure(b, bs, func(i int) error {
				a, err := bs.s.Admit(bg, fmt.Sprintf("https://busy.bench/%d", i), fmt.Sprintf("r%d", i))
				if err == nil && a.Decision != Refused {
					err = fmt.Errorf("decision %s", a.Decision)
				}
				return err
			})
		})
		b.Run(bs.name+"/cached", func(b *testing.B) {
			measure(b, bs, func(i int) error {
				a, err := bs.s.Admit(bg, "https://cached.bench/", fmt.Sprintf("c%d", i))
				if err == nil && a.Decision != Cached {
					err = fmt.Errorf("decision %s", a.Decision)
				}
				return err
			})
		})
	}
}

// BenchmarkLookupHit measures a cache hit with a 20 KiB report, the path of
// a repeat within 15 minutes.
func BenchmarkLookupHit(b *testing.B) {
	report := make([]byte, 20<<10)
	for i := range report {
		report[i] = "abcdefghij\"{}:,"[i*7%15]
	}
	for _, bs := range benchStores(b, Defaults()) {
		l := mustAdmit(b, bs.s, "https://hit.bench/", "hit")
		if err := bs.s.Complete(bg, l, Outcome{Report: report}); err != nil {
			b.Fatal(err)
		}
		b.Run(bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(report)))
			measure(b, bs, func(int) error {
				_, ok, err := bs.s.Lookup(bg, "https://hit.bench/")
				if err == nil && !ok {
					err = fmt.Errorf("miss")
				}
				return err
			})
		})
	}
}

// BenchmarkAdmitParallel measures decision throughput with many callers on
// one store (refusals on busy hosts, so the state stays small).
func BenchmarkAdmitParallel(b *testing.B) {
	for _, bs := range benchStores(b, Defaults()) {
		for h := range 16 {
			mustAdmit(b, bs.s, fmt.Sprintf("https://p%d.bench/", h), fmt.Sprintf("p%d", h))
		}
		b.Run(bs.name, func(b *testing.B) {
			var n atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					a, err := bs.s.Admit(bg, fmt.Sprintf("https://p%d.bench/%d", i%16, i), fmt.Sprintf("q%d", i))
					if err != nil || a.Decision != Refused {
						b.Errorf("admit: %v %v", a.Decision, err)
						return
					}
				}
			})
			b.ReportMetric(float64(n.Load())/time.Since(start).Seconds(), "decisions/s")
		})
	}
}

// BenchmarkRedisDecisionUnderLoad times Reserve decisions on Redis from 16
// goroutines while 8 others keep every core busy (a machine at load 6–10,
// as a fleet instance rendering pages is), and reports the p99, p99.9 and
// slowest decision: the figures that DefaultCallTimeout must clear, or a
// busy instance answers 503 for a Redis that is well.
func BenchmarkRedisDecisionUnderLoad(b *testing.B) {
	url, raw := redistest.Shared(b)
	l := Defaults()
	l.Windows = []Window{{N: 1000000, Per: time.Minute}}
	s, err := NewRedisStore(bg, url, sqliteArchive(b), l, RedisOptions{Prefix: redistest.Prefix(b, raw), CallTimeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	stop := make(chan struct{})
	var burn sync.WaitGroup
	for range 8 {
		burn.Go(func() {
			x := 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := range 100000 {
					x += i * i
				}
				_ = x
			}
		})
	}
	var mu sync.Mutex
	var lat []time.Duration
	var n atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for {
				i := n.Add(1)
				if i > int64(b.N) {
					return
				}
				start := time.Now()
				if _, err := s.Reserve(bg, fmt.Sprintf("https://h%d.bench/%d", i%500, g), fmt.Sprintf("q%d", i), time.Minute); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(start)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(stop)
	burn.Wait()
	slices.Sort(lat)
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)*999/1000].Microseconds())/1000, "p99.9-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
