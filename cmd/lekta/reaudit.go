package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"lekta.dev/lekta/schedule"
	"lekta.dev/lekta/server"
)

// reauditFlags are serve's flags of members' scheduled re-audits.
type reauditFlags struct {
	window      string
	timezone    string
	minInterval time.Duration
	rescueAfter time.Duration
	sites       int
	runs        int
}

func (f *reauditFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.window, "reaudit-window", schedule.DefaultWindow, "night window HH:MM-HH:MM where daily and weekly re-audits fall, each site at its own stable moment")
	fs.StringVar(&f.timezone, "reaudit-timezone", "UTC", "time zone of --reaudit-window (an IANA name such as Europe/Berlin)")
	fs.DurationVar(&f.minInterval, "reaudit-min-interval", schedule.DefaultMinInterval, "shortest schedule a member may save (an interval below it is refused)")
	fs.DurationVar(&f.rescueAfter, "rescue-after", 0, "how long an audit may hold its job before River takes it back from an instance that stopped (default --timeout + 1m): one that had started then ends as an error, never run twice")
	fs.IntVar(&f.sites, "sites-per-member", server.DefaultSitesPerMember, "saved sites per member")
	fs.IntVar(&f.runs, "member-runs-per-hour", server.DefaultRunsPerHour, "run-now requests per member per hour")
}

// config checks the flags into the queue's configuration; errors name the
// flag. sf has serve's --renderers, --queue and --public-url.
func (f *reauditFlags) config(p *parts, cfg *config, sf *serveFlags, logger *slog.Logger) (schedule.Config, error) {
	loc, err := time.LoadLocation(f.timezone)
	if err != nil {
		return schedule.Config{}, fmt.Errorf("--reaudit-timezone %q: %w", f.timezone, err)
	}
	w, err := schedule.ParseWindow(f.window, loc)
	if err != nil {
		return schedule.Config{}, fmt.Errorf("--reaudit-window %w", err)
	}
	switch {
	case f.minInterval < time.Second:
		return schedule.Config{}, fmt.Errorf("--reaudit-min-interval %s: must be at least 1s", f.minInterval)
	case f.sites < 1:
		return schedule.Config{}, fmt.Errorf("--sites-per-member %d: must be at least 1", f.sites)
	case f.runs < 1:
		return schedule.Config{}, fmt.Errorf("--member-runs-per-hour %d: must be at least 1", f.runs)
	}
	// A job is the audit's hard limit and the storing of its report, which
	// is retried for a lease's life.
	job := cfg.timeout + leaseTTL + leaseMargin
	if f.rescueAfter != 0 && f.rescueAfter <= cfg.timeout {
		return schedule.Config{}, fmt.Errorf("--rescue-after %s: must be longer than --timeout %s", f.rescueAfter, cfg.timeout)
	}
	if f.rescueAfter != 0 && f.rescueAfter <= job {
		job = f.rescueAfter - time.Second
	}
	// The leader looks for due re-audits often enough for the shortest schedule.
	tick := min(max(f.minInterval/2, time.Second), time.Minute)
	rc, _ := cfg.databaseFlags.config(cfg.getenv)
	return schedule.Config{
		Records: p.records, DatabaseURL: rc.DatabaseURL, DataDir: rc.DataDir, Guard: p.guard,
		Renderers: sf.renderers, QueueLimit: sf.queue, Timeout: cfg.timeout,
		Window: w, MinInterval: f.minInterval, Tick: tick, CacheTTL: p.limits.CacheTTL,
		JobTimeout: job, RescueAfter: f.rescueAfter, Logger: logger,
		ReportURL: func(id string) string { return server.PublicLink(sf.publicURL, "/r/"+id) },
	}, nil
}

// startScheduler builds the queue, on River; serve starts it once the
// server, which runs its audits, exists.
func (f *reauditFlags) startScheduler(ctx context.Context, p *parts, cfg *config, sf *serveFlags, logger *slog.Logger) (*schedule.Scheduler, schedule.Config, error) {
	sc, err := f.config(p, cfg, sf, logger)
	if err != nil {
		return nil, sc, exitWith(exitBadInput, err)
	}
	s, err := schedule.New(ctx, sc)
	if err != nil {
		return nil, sc, exitWith(exitNotRun, fmt.Errorf("start the audit queue: %w", err))
	}
	return s, sc, nil
}
