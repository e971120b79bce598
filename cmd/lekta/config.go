package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/render"
)

// leaseTTL is the life of a host's concurrency lease after its holder's
// last heartbeat: a running audit renews it every leaseTTL/3 and stops when
// two renewals in a row fail. A lease lives at least --timeout plus
// leaseMargin from its start whatever the renewals say, so a dead holder
// frees its host at the later of that bound and leaseTTL after its last
// heartbeat, and a live one never loses it.
const leaseTTL = 30 * time.Second

// leaseMargin is how long past the hard limit a lease lives at least: the
// audit's last requests and the storing of its report.
const leaseMargin = 15 * time.Second

// strandedKeep is how long a queued audit's progress entry lives with Redis
// and no PostgreSQL, where only the instance that queued it can run it.
const strandedKeep = 30 * 24 * time.Hour

// config is the configuration audit and serve share, filled from flags with
// LEKTA_* environment fallbacks.
type config struct {
	// getenv is the environment, for defaults derived from it (the data dir).
	getenv func(string) string

	databaseFlags
	timeout   time.Duration
	resolve   listFlag
	allowAddr listFlag
	allowPort listFlag
	deny      listFlag
	chromium  string
	// renderBudget is the page time the render lane grants a page.
	renderBudget time.Duration
	// noSourceMaps turns off the fetching of scripts' source maps.
	noSourceMaps bool
	// renderSpares is how many browser contexts the browser keeps
	// prepared: serve's --renderers (render.Options.Spares).
	renderSpares int
	// oneRender: the process renders one page at most (lekta audit): no
	// spare context, and the browser closes once its page is read.
	oneRender bool

	redisURL     string
	redisCluster bool
	redisPrefix  string
	rate         string
	concurrency  int
	cacheTTL     time.Duration
	reportTTL    time.Duration
	recordsFlags
}

// register adds the shared flags to fs.
func (c *config) register(fs *flag.FlagSet) {
	def := cache.Defaults()
	fs.DurationVar(&c.timeout, "timeout", audit.DefaultTimeout, "hard limit for the whole audit; at the limit, finished lanes are kept")
	fs.Var(&c.resolve, "resolve", "HOST:PORT:ADDR[:PORT] (repeatable): connect to ADDR whenever either lane needs HOST:PORT, as curl's --resolve")
	fs.Var(&c.allowAddr, "allow-addr", "IP:PORT (repeatable): let the SSRF guard dial this exact private or loopback address and port")
	fs.Var(&c.allowPort, "allow-port", "PORT (repeatable): allow targets on this port besides 80 and 443")
	fs.Var(&c.deny, "deny", "CIDR or IP (repeatable): refuse these addresses too (e.g. your own VPC ranges)")
	fs.StringVar(&c.chromium, "chromium", "", "browser binary (default: the first found of "+strings.Join(render.BrowserNames(), ", ")+"; names without a slash are looked up on PATH)")
	fs.DurationVar(&c.renderBudget, "render-budget", render.DefaultBudget, "page time the render lane grants a page: content that timers, fetch() chains and scrolling produce within it is seen")
	fs.BoolVar(&c.noSourceMaps, "no-source-maps", false, "never fetch a script's source map to name the site's own file behind a cause (inline maps are still read)")
	c.databaseFlags.register(fs)
	fs.StringVar(&c.redisURL, "redis-url", "", "redis://… hot state (limits, cache, in-flight audits) shared by every instance; without it, in the SQLite file in --data-dir")
	fs.StringVar(&c.redisPrefix, "redis-prefix", cache.DefaultPrefix, "start of every Redis key, so several deployments (or test runs) can share one Redis; no braces")
	fs.BoolVar(&c.redisCluster, "redis-cluster", false, "--redis-url names a node of a Redis Cluster (keys of one host share a hash slot)")
	fs.StringVar(&c.rate, "rate", windowsString(def.Windows), "per-host start limits, N/duration pairs")
	fs.IntVar(&c.concurrency, "per-host-concurrency", def.Concurrency, "audits of one host at a time")
	fs.DurationVar(&c.cacheTTL, "cache-ttl", def.CacheTTL, "how long a result answers repeats of the same URL")
	fs.DurationVar(&c.reportTTL, "report-ttl", def.ReportTTL, "how long a report stays readable by its id")
	c.recordsFlags.register(fs)
}

func windowsString(ws []cache.Window) string {
	s := ""
	for i, w := range ws {
		if i > 0 {
			s += ","
		}
		s += w.String()
	}
	return s
}

// guard builds the SSRF guard; errors name the flag.
func (c *config) guard() (*policy.Guard, error) {
	var gc policy.GuardConfig
	for _, v := range c.resolve {
		r, err := policy.ParseResolveRule(v)
		if err != nil {
			return nil, fmt.Errorf("--resolve %q: %w", v, err)
		}
		gc.Resolve = append(gc.Resolve, r)
	}
	for _, v := range c.allowAddr {
		a, err := policy.ParseAllowAddr(v)
		if err != nil {
			return nil, fmt.Errorf("--allow-addr %q: %w", v, err)
		}
		gc.AllowAddrs = append(gc.AllowAddrs, a)
	}
	for _, v := range c.allowPort {
		p, err := policy.ParsePort(v)
		if err != nil {
			return nil, fmt.Errorf("--allow-port %q: %w", v, err)
		}
		gc.AllowPorts = append(gc.AllowPorts, p)
	}
	for _, v := range c.deny {
		p, err := policy.ParseDenyPrefix(v)
		if err != nil {
			return nil, fmt.Errorf("--deny %q: %w", v, err)
		}
		gc.DenyPrefixes = append(gc.DenyPrefixes, p)
	}
	return policy.NewGuard(gc)
}

// limits builds the store limits; errors name the flag.
func (c *config) limits() (cache.Limits, error) {
	l := cache.Defaults()
	ws, err := cache.ParseWindows(c.rate)
	if err != nil {
		return l, fmt.Errorf("--rate %q: %w", c.rate, err)
	}
	if c.timeout <= 0 {
		return l, fmt.Errorf("--timeout %s: must be positive", c.timeout)
	}
	if c.renderBudget < 100*time.Millisecond || c.renderBudget > time.Minute {
		return l, fmt.Errorf("--render-budget %s: must be between 100ms and 1m", c.renderBudget)
	}
	l.Windows, l.Concurrency, l.CacheTTL, l.ReportTTL = ws, c.concurrency, c.cacheTTL, c.reportTTL
	l.LeaseTTL = leaseTTL
	// A lease lives at least the hard limit plus a margin from its start,
	// so a holder that can neither renew nor stop (a paused process) never
	// overlaps the next audit of its host.
	l.LeaseMin = c.timeout + leaseMargin
	l.StartSlack = cache.DefaultStartSlack
	if err := l.Validate(); err != nil {
		return l, fmt.Errorf("store limits: %w", err)
	}
	return l, nil
}

// errBadConfig marks configuration errors (exit 2), as opposed to parts
// that failed to start (exit 3).
var errBadConfig = errors.New("bad configuration")

// parts are the running pieces audit and serve build from a config.
type parts struct {
	identity policy.Identity
	guard    *policy.Guard
	limits   cache.Limits
	records  *records.DB
	store    cache.Store
	sweep    sweeper
	lazy     *lazyBrowser
	// browser is set by startBrowser; serve uses it directly.
	browser *render.Browser
	auditor *audit.Auditor
}

// validate checks everything that needs no I/O; errors wrap errBadConfig.
func (c *config) validate() (*policy.Guard, cache.Limits, error) {
	g, err := c.guard()
	if err != nil {
		return nil, cache.Limits{}, fmt.Errorf("%w: %w", errBadConfig, err)
	}
	l, err := c.limits()
	if err != nil {
		return nil, l, fmt.Errorf("%w: %w", errBadConfig, err)
	}
	if strings.ContainsAny(c.redisPrefix, "{}") {
		return nil, l, fmt.Errorf("%w: --redis-prefix %q: braces would change the keys' Redis Cluster hash tag", errBadConfig, c.redisPrefix)
	}
	if c.databaseURL != "" && c.redisURL == "" {
		return nil, l, fmt.Errorf("%w: --database-url needs --redis-url: instances that share PostgreSQL must share the per-host limits too, "+
			"and those live in Redis (without --database-url everything is kept in the SQLite file in --data-dir)", errBadConfig)
	}
	if c.databaseURL != "" {
		if err := records.CheckURL(c.databaseURL); err != nil {
			return nil, l, fmt.Errorf("%w: %w", errBadConfig, err)
		}
	}
	if _, err := c.recordsFlags.parsed(); err != nil {
		return nil, l, fmt.Errorf("%w: %w", errBadConfig, err)
	}
	return g, l, nil
}

// open opens the store and builds the auditor over a browser that starts on
// first use (or by startBrowser). Close releases them.
func (c *config) open(ctx context.Context, logger *slog.Logger) (*parts, error) {
	g, l, err := c.validate()
	if err != nil {
		return nil, err
	}
	p := &parts{identity: c.recordsFlags.identity(), guard: g, limits: l}
	p.lazy = c.lazyBrowser(g, p.identity, logger)
	if p.records, err = c.openRecords(ctx, c.getenv); err != nil {
		_ = p.lazy.Close()
		return nil, err
	}
	if c.redisURL == "" {
		var s *cache.SQLiteStore
		s, err = cache.NewSQLiteStore(ctx, p.records.SQL(), p.records, l, cache.SQLiteOptions{Explain: records.Explain})
		p.store, p.sweep.hot = s, s
	} else {
		p.store, err = cache.NewRedisStore(ctx, c.redisURL, p.records, l, cache.RedisOptions{Prefix: c.redisPrefix, Cluster: c.redisCluster, Logger: logger})
	}
	if err != nil {
		_ = p.lazy.Close()
		_ = p.records.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	p.sweep.records, p.sweep.logger, p.sweep.requestTTL = p.records, logger, c.requestTTL
	ac := audit.Config{
		Guard: g, Renderer: p.lazy, Store: p.store, Token: p.identity.Token,
		PlainUA: p.identity.PlainUA(), Timeout: c.timeout, LeaseTTL: l.LeaseTTL, Logger: logger,
	}
	if c.requestTTL > 0 {
		ac.Requests = p.records
	}
	if c.redisURL != "" && c.databaseURL == "" {
		// Each instance's queue is its own SQLite file: another instance
		// answers its queued ids while it is stopped.
		ac.QueuedKeep = strandedKeep
	}
	p.auditor, err = audit.New(ac)
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// lazyBrowser is the render lane's browser, started on first use.
func (c *config) lazyBrowser(g *policy.Guard, id policy.Identity, logger *slog.Logger) *lazyBrowser {
	return &lazyBrowser{once: c.oneRender, opts: render.Options{
		ExecPath: c.chromium, Dial: g.DialContext, CheckURL: g.CheckURL,
		UASuffix: id.RenderSuffix(), Logger: logger, Budget: c.renderBudget,
		Spares: c.renderSpares, NoSourceMaps: c.noSourceMaps, NoSpare: c.oneRender,
	}}
}

// start is open followed by startBrowser, for serve, which needs the
// browser from the start (its user agent on /bot, readiness).
func (c *config) start(ctx context.Context, logger *slog.Logger) (*parts, error) {
	p, err := c.open(ctx, logger)
	if err != nil {
		return nil, err
	}
	if err := p.startBrowser(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// startBrowser starts Chromium now rather than at the first render.
func (p *parts) startBrowser(ctx context.Context) error {
	b, err := p.lazy.start(ctx)
	if err != nil {
		return err
	}
	p.browser = b
	return nil
}

// Close stops the browser, if it was started, and closes the store and
// the records database.
func (p *parts) Close() error {
	return errors.Join(p.lazy.Close(), p.store.Close(), p.records.Close())
}

// where says, for the start-up line of serve, where each role keeps its state.
func (p *parts) where(c *config) string {
	switch {
	case c.redisURL == "":
		return "per-host limits, the result cache and reports are kept in " + p.records.Where() +
			", shared by every lekta on this machine that uses this --data-dir"
	case p.records.Kind() == records.SQLite:
		return "hot state is shared in Redis; reports are kept in " + p.records.Where() +
			" on this machine: they are local to this instance (other instances answer them only while the result is cached; set --database-url to share them)"
	}
	return "hot state is shared in Redis; reports are kept in " + p.records.Where() + ", shared by every instance"
}
