package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// storeOptions are the flags of `lekta-bench store` (make bench-store).
type storeOptions struct {
	databaseURL, redisURL string
	audits                int
	rate                  float64
	workers               int
	reportBytes, records  int
	history               float64
}

// runStore plays N audits' worth of store traffic — reserve, admit,
// progress, complete with a report of realistic size, ~20 request records,
// one River job, a history row for a share, verify lookups and report
// reads alongside — at a chosen rate without Chromium, once on the schema
// before partitioning (version 7) and once on today's, in one run, and
// prints what each costs.
func runStore(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("lekta-bench store", flag.ContinueOnError)
	var o storeOptions
	fs.StringVar(&o.databaseURL, "database-url", "", "PostgreSQL server to use (a database per schema is created on it); default: a throw-away cluster")
	fs.StringVar(&o.redisURL, "redis-url", "redis://127.0.0.1:6379", "Redis for the hot state (keys under a prefix of the run's own)")
	fs.IntVar(&o.audits, "audits", 20000, "audits at the fixed rate, per schema (half as many again flat out)")
	fs.Float64Var(&o.rate, "rate", 116, "audits a second in the fixed-rate phase (116 is 10× a million a day)")
	fs.IntVar(&o.workers, "workers", 32, "River workers running the audits' store traffic")
	fs.IntVar(&o.reportBytes, "report-bytes", 40000, "size of a report before compression")
	fs.IntVar(&o.records, "records", 20, "request records per audit")
	fs.Float64Var(&o.history, "history", 0.1, "share of audits that are members' re-audits with a history row")
	if err := fs.Parse(args); err != nil {
		return err
	}
	server := o.databaseURL
	var cluster *pgtest.Cluster
	if server == "" {
		var err error
		if cluster, err = pgtest.StartCluster(); err != nil {
			return err
		}
		defer cluster.Close()
	}
	fmt.Fprintf(out, "store bench: %d audits at %.0f/s, then %d flat out; %d workers, reports of %d bytes, %d request records, %.0f%% history rows\n",
		o.audits, o.rate, o.audits/2, o.workers, o.reportBytes, o.records, o.history*100)
	var results []storeResult
	for _, v := range []int{7, 8} { // before partitioning, and today's
		url, err := benchDatabase(cluster, server, v)
		if err != nil {
			return err
		}
		res, err := storeRun(ctx, o, url, v)
		if err != nil {
			return fmt.Errorf("schema version %d: %w", v, err)
		}
		res.print(out)
		results = append(results, res)
	}
	printRatios(out, results)
	return nil
}

// benchDatabase creates the empty database of schema version v.
func benchDatabase(cluster *pgtest.Cluster, server string, v int) (string, error) {
	name := fmt.Sprintf("lekta_bench_v%d_%d", v, time.Now().UnixNano())
	if cluster != nil {
		return cluster.CreateDatabase(name)
	}
	db, err := records.Connect(context.Background(), records.Config{DatabaseURL: server})
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.SQL().Exec(`CREATE DATABASE "` + name + `"`); err != nil {
		return "", fmt.Errorf("create the bench database on -database-url: %w", err)
	}
	return replaceDatabase(server, name)
}

// storeResult is one schema's figures.
type storeResult struct {
	version        int
	fixedRate      float64 // achieved, audits/s, in the fixed-rate phase
	maxRate        float64 // achieved flat out
	lat            *latencies
	sizes          []tableSize
	audits         int
	sweep          time.Duration // one sweep of every request record the run wrote
	sweepRows      int64
	dropped        int     // hourly partitions the sweep dropped (partitioned schema)
	perAudit       int     // request records per audit
	simHours       float64 // simulated hours the request records span
	reportSweep    time.Duration
	reportsExpired int64
}

// storeRun runs both phases on a database of schema version v.
func storeRun(ctx context.Context, o storeOptions, url string, v int) (storeResult, error) {
	res := storeResult{version: v, lat: &latencies{}}
	db, err := records.Connect(ctx, records.Config{DatabaseURL: url})
	if err != nil {
		return res, err
	}
	defer db.Close()
	if _, err := db.MigrateTo(ctx, v); err != nil {
		return res, err
	}
	env, err := newLoadEnv(ctx, o, db, url, res.lat)
	if err != nil {
		return res, err
	}
	defer env.close()
	if res.fixedRate, err = env.play(ctx, o.audits, o.rate); err != nil {
		return res, err
	}
	if res.maxRate, err = env.play(ctx, o.audits/2, 0); err != nil {
		return res, err
	}
	res.audits = o.audits + o.audits/2
	if res.sizes, err = sizes(ctx, db); err != nil {
		return res, err
	}
	res.simHours = float64(env.clock.n.Load()) * simStep.Hours()
	res.perAudit = o.records
	return res, res.sweepCosts(ctx, db, env.clock)
}

// partitionCount is how many partitions request_records has (0 before
// partitioning).
func partitionCount(ctx context.Context, db *records.DB) (int, error) {
	ts, err := db.Tables(ctx)
	if err != nil {
		return 0, err
	}
	return len(ts[1].Partitions), nil
}

// sweepCosts times the sweeps of everything the run wrote: request records
// (7 days after the last, the default TTL) and reports (at their expiry).
func (res *storeResult) sweepCosts(ctx context.Context, db *records.DB, clock *simClock) error {
	const ttl = 7 * 24 * time.Hour
	// Every request record is past the TTL at end; the partitions made
	// for the hours after the run (48 ahead) stay.
	end := clock.next().Add(ttl + time.Hour)
	before, err := partitionCount(ctx, db)
	if err != nil {
		return err
	}
	t := time.Now()
	n, err := db.SweepRequests(ctx, end, ttl)
	res.sweep, res.sweepRows = time.Since(t), n
	if err != nil {
		return err
	}
	after, err := partitionCount(ctx, db)
	res.dropped = before - after
	if err != nil {
		return err
	}
	// The partitions of the month ahead are made first, as the sweeps of
	// that month would have: what is timed is the sweep at the reports'
	// expiry.
	later := time.Now().Add(31 * 24 * time.Hour)
	if err := db.EnsurePartitions(ctx, later); err != nil {
		return err
	}
	t = time.Now()
	n, err = db.Sweep(ctx, later)
	res.reportSweep, res.reportsExpired = time.Since(t), n
	return err
}

// loadEnv is one run's parts: the Redis store, the River scheduler whose
// workers run loadRunner, and the URLs of the audits done so far.
type loadEnv struct {
	store  cache.Store
	sched  *schedule.Scheduler
	runner *loadRunner
	clock  *simClock
	lat    *latencies
	db     *records.DB
	prefix string
	seq    atomic.Int64 // submissions so far (the submitting goroutine adds)
	doneID []string
}

func newLoadEnv(ctx context.Context, o storeOptions, db *records.DB, url string, lat *latencies) (*loadEnv, error) {
	e := &loadEnv{lat: lat, db: db, prefix: fmt.Sprintf("lektabench%d", time.Now().UnixNano())}
	lim := cache.Defaults()
	var err error
	if e.store, err = cache.NewRedisStore(ctx, o.redisURL, db, lim, cache.RedisOptions{Prefix: e.prefix}); err != nil {
		return nil, err
	}
	sites, err := benchSites(ctx, db)
	if err != nil {
		return nil, err
	}
	// Request records carry a simulated time ten minutes before an hour's
	// end, so that the run crosses a partition boundary.
	start := time.Now().UTC().Truncate(time.Hour).Add(50 * time.Minute)
	e.clock = &simClock{start: start}
	e.runner = &loadRunner{store: e.store, db: db, lat: lat, clock: e.clock, report: fakeReport(o.reportBytes),
		records: o.records, sites: sites, history: o.history, done: make(chan string, 1024)}
	g, _ := policy.NewGuard(policy.GuardConfig{})
	e.sched, err = schedule.New(ctx, schedule.Config{Records: db, DatabaseURL: url, Guard: g, Renderers: o.workers,
		QueueLimit: schedule.DefaultQueueLimit, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return nil, err
	}
	if err := e.sched.Start(ctx, e.runner); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *loadEnv) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = e.sched.Stop(ctx)
	_ = e.store.Close()
}

// benchSites saves 50 sites of one member, for the history rows.
func benchSites(ctx context.Context, db *records.DB) ([]string, error) {
	m, _, err := db.AddMember(ctx, fmt.Sprintf("bench%d@example.com", time.Now().UnixNano()), time.Now())
	if err != nil {
		return nil, err
	}
	var ids []string
	for i := range 50 {
		s, err := db.AddSite(ctx, records.Site{MemberID: m.ID, URL: fmt.Sprintf("https://site%d.bench.example/", i), Schedule: "daily"}, 100, time.Now())
		if err != nil {
			return nil, err
		}
		ids = append(ids, s.ID)
	}
	return ids, nil
}

// play submits n audits at rate a second (0: as fast as the queue takes
// them), with a verify lookup and a report read beside each, and returns
// the rate at which they completed.
func (e *loadEnv) play(ctx context.Context, n int, rate float64) (float64, error) {
	start := time.Now()
	errs := make(chan error, 1)
	go func() {
		for i := range n {
			if rate > 0 {
				if d := time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))); d > 0 {
					time.Sleep(d)
				}
			}
			if err := e.submit(ctx); err != nil {
				errs <- err
				return
			}
		}
	}()
	for done := 0; done < n; done++ {
		select {
		case id := <-e.runner.done:
			e.doneID = append(e.doneID, id)
			e.readAlongside(ctx)
		case err := <-errs:
			return 0, err
		case <-time.After(2 * time.Minute):
			return 0, fmt.Errorf("%d of %d audits completed; the queue stalled", done, n)
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// submit is one submission: reserve, progress queued, the River job.
func (e *loadEnv) submit(ctx context.Context) error {
	n := e.seq.Add(1)
	id := fmt.Sprintf("B%025d", n)
	url := fmt.Sprintf("https://h%d.%s.example/", n, e.prefix)
	t := time.Now()
	a, err := e.store.Reserve(ctx, url, id, time.Minute)
	e.lat.add("reserve", t)
	if err != nil || a.Decision != cache.Reserved {
		return fmt.Errorf("reserve %s: %v %v", url, a.Decision, err)
	}
	t = time.Now()
	if err := e.store.SetProgress(ctx, cache.Progress{ID: id, URL: url, Status: cache.ProgressQueued, Position: 1}); err != nil {
		return err
	}
	e.lat.add("progress", t)
	for {
		t = time.Now()
		_, err := e.sched.Enqueue(ctx, schedule.AuditArgs{ID: id, URL: url, Trigger: "api"}, time.Now())
		if errors.Is(err, schedule.ErrQueueFull) {
			time.Sleep(5 * time.Millisecond) // a client told 503 comes back
			continue
		}
		if err != nil {
			return err
		}
		e.lat.add("enqueue (River job)", t)
		return nil
	}
}

// readAlongside is what readers do meanwhile: a report read by id and a
// site operator's verify lookup of one host's window.
func (e *loadEnv) readAlongside(ctx context.Context) {
	id := e.doneID[rand.IntN(len(e.doneID))]
	t := time.Now()
	if _, err := e.store.Report(ctx, id); err == nil {
		e.lat.add("report read", t)
	}
	// A log line's time, give or take the ten minutes verification looks
	// around it: audit k's records carry about the k-th simulated step.
	k := rand.Int64N(e.seq.Load()) + 1
	host := fmt.Sprintf("h%d.%s.example", k, e.prefix)
	at := e.clock.start.Add(time.Duration(k) * simStep)
	t = time.Now()
	if _, err := e.db.Candidates(ctx, host, at.Add(-10*time.Minute), at.Add(10*time.Minute)); err == nil {
		e.lat.add("verify lookup", t)
	}
}

var errNoDatabase = errors.New("no database name in -database-url")
