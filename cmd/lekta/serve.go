package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/wake"
	"lekta.dev/lekta/plainget"
	"lekta.dev/lekta/render"
	"lekta.dev/lekta/schedule"
	"lekta.dev/lekta/server"
	"lekta.dev/lekta/verify"
)

const serveUsage = `usage: lekta serve [flags]

Runs the web service: the form at /, reports at /r/{id}, the JSON API at
/api/v1, the bot policy at /bot, and /healthz, /readyz, /metrics.
SIGINT or SIGTERM stops it gracefully: new submissions get 503, running
audits get --shutdown-grace, queued ones stay in the queue for another
instance or the next start.
`

// Shutdown budget: HTTP handlers get httpGrace; running audits get
// --shutdown-grace, and then storeGrace to store their reports.
const (
	httpGrace  = 15 * time.Second
	storeGrace = 15 * time.Second
)

// serveFlags are the flags only serve takes.
type serveFlags struct {
	addr       string
	renderers  int
	queue      int
	clientRate string
	proxies    listFlag
	logFormat  string
	contact    string
	grace      time.Duration
	reaudit    reauditFlags
	join       joinFlags

	// publicURL is --public-url, checked and without a trailing slash
	// once parsed has run.
	publicURL string
}

func (f *serveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	fs.IntVar(&f.renderers, "renderers", runtime.NumCPU(), "audits run at a time (one browser context each)")
	fs.IntVar(&f.queue, "queue", schedule.DefaultQueueLimit, "public audits that may wait to start in the shared queue, all instances together; beyond it submissions get 503")
	fs.StringVar(&f.clientRate, "client-rate", "10/1m", "submissions per client address, N/duration pairs (kept in this process's memory)")
	fs.Var(&f.proxies, "trusted-proxy", "CIDR or IP (repeatable): peers whose X-Forwarded-For names the client")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&f.contact, "contact", "", "where site operators reach you (mailto: or https: URL, or text), shown on /bot")
	fs.StringVar(&f.publicURL, "public-url", "", "the absolute http(s) address this instance is reached at (https://audit.example.com): webhook report_urls, badge addresses and /bot's links become absolute, --bot-info-url defaults to it followed by /bot, and an https one makes the member session cookie Secure")
	fs.DurationVar(&f.grace, "shutdown-grace", server.DefaultShutdownGrace, "on SIGTERM, how long running audits may take to finish before they are cancelled; queued ones stay queued")
	f.reaudit.register(fs)
	f.join.register(fs)
}

// parsed checks the serve flags; errors name the flag.
func (f *serveFlags) parsed() ([]cache.Window, []netip.Prefix, error) {
	ws, err := cache.ParseWindows(f.clientRate)
	if err != nil {
		return nil, nil, fmt.Errorf("--client-rate %q: %w", f.clientRate, err)
	}
	var ps []netip.Prefix
	for _, v := range f.proxies {
		p, err := parsePrefix(v)
		if err != nil {
			return nil, nil, fmt.Errorf("--trusted-proxy %q: %w", v, err)
		}
		ps = append(ps, p)
	}
	switch {
	case f.logFormat != "text" && f.logFormat != "json":
		return nil, nil, fmt.Errorf("--log-format %q: want text or json", f.logFormat)
	case f.renderers < 1:
		return nil, nil, fmt.Errorf("--renderers %d: must be at least 1", f.renderers)
	case f.queue < 1:
		return nil, nil, fmt.Errorf("--queue %d: must be at least 1", f.queue)
	case f.grace <= 0:
		return nil, nil, fmt.Errorf("--shutdown-grace %s: must be positive", f.grace)
	}
	if f.publicURL != "" {
		u, err := server.ParsePublicURL(f.publicURL)
		if err != nil {
			return nil, nil, fmt.Errorf("--public-url %q: %w", f.publicURL, err)
		}
		f.publicURL = u
	}
	if err := f.join.check(f.publicURL); err != nil {
		return nil, nil, err
	}
	return ws, ps, nil
}

// parsePrefix reads a CIDR or a single address.
func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
}

func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// serveSettings are serve's flags, read and checked.
type serveSettings struct {
	cfg        config
	sf         serveFlags
	clientRate []cache.Window
	proxies    []netip.Prefix
}

// readServeSettings reads serve's flags and checks all that needs nothing
// started, the secrets key file included: a bad one is exit status 2
// before anything listens.
func readServeSettings(args []string, getenv func(string) string, stderr io.Writer) (*serveSettings, error) {
	s := &serveSettings{cfg: config{getenv: getenv}}
	fs := newFlagSet("serve", serveUsage, stderr)
	s.cfg.register(fs)
	s.sf.register(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return nil, exitWith(exitBadInput, flagError(err))
	}
	if fs.NArg() != 0 {
		return nil, exitWith(exitBadInput, usageError(fs, fmt.Errorf("serve takes no arguments, got %q", fs.Args())))
	}
	var err error
	if s.clientRate, s.proxies, err = s.sf.parsed(); err != nil {
		return nil, exitWith(exitBadInput, err)
	}
	if s.cfg.botInfoURL == "" && s.sf.publicURL != "" {
		s.cfg.botInfoURL = server.PublicLink(s.sf.publicURL, "/bot")
	}
	if _, _, err := s.cfg.validate(); err != nil {
		return nil, exitWith(exitBadInput, err)
	}
	if err := s.cfg.checkSecretsKey(); err != nil {
		return nil, exitWith(exitBadInput, err)
	}
	return s, nil
}

// runServe is "lekta serve".
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	s, err := readServeSettings(args, getenv, stderr)
	if err != nil {
		return err
	}
	cfg, sf := &s.cfg, &s.sf
	logger := newLogger(stderr, sf.logFormat, slog.LevelInfo)
	ln, err := net.Listen("tcp", sf.addr)
	if err != nil {
		return exitWith(exitNotRun, fmt.Errorf("listen on --addr %s: %w", sf.addr, err))
	}
	defer ln.Close()
	// The store, browser and auditor log warnings only: the server writes
	// the one line per audit itself.
	cfg.renderSpares = sf.renderers // one prepared browser context per renderer
	p, err := cfg.start(ctx, newLogger(stderr, sf.logFormat, slog.LevelWarn))
	if err != nil {
		return exitWith(exitFor(err), err)
	}
	defer p.Close()
	// The sweeper stops before the store closes (defers run in reverse).
	stopSweep := p.sweep.inBackground(sweepEvery)
	defer stopSweep()
	sched, sc, err := sf.reaudit.startScheduler(ctx, p, cfg, sf, logger)
	if err != nil {
		return err
	}
	scfg := serverConfig(p, cfg, sf, s.clientRate, s.proxies, logger)
	scfg.Queue, scfg.Members, scfg.Guard = sched, p.records, p.guard
	newsCtx, stopNews := context.WithCancel(context.WithoutCancel(ctx)) // waiters hear news until the end
	defer stopNews()
	scfg.Wake = followNews(newsCtx, p)
	scfg.SitesPerMember, scfg.RunsPerHour = sf.reaudit.sites, sf.reaudit.runs
	scfg.Policy.Reaudits = &server.ReauditPolicy{Window: sc.Window.String(), Zone: sc.Window.Loc.String(), MinInterval: sc.MinInterval}
	srv, err := server.New(scfg)
	if err != nil {
		_ = sched.Stop(context.Background())
		return exitWith(exitNotRun, err)
	}
	if err := sched.Start(context.WithoutCancel(ctx), srv); err != nil {
		_ = sched.Stop(context.Background())
		return exitWith(exitNotRun, err)
	}
	hs := httpServer(srv.Handler(), logger)
	fmt.Fprintf(stdout, "lekta: serving on http://%s\n", ln.Addr())
	fmt.Fprintf(stderr, "lekta: %s\n", p.where(cfg))
	warnDurability(ctx, p.store, stderr)
	if sf.contact == "" {
		fmt.Fprintln(stderr, "lekta: warning: no --contact: /bot tells site operators that no contact was published; set --contact to a mailto: or https: address where they can reach you")
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	logger.Info("shutting down", "running_audits", srv.Running())
	return errors.Join(serveErr, shutdown(hs, srv, sf.grace+storeGrace))
}

// followNews is the hub the server's waiters (?wait=, a following report
// page) wait on, told of the reports every instance stores until ctx ends:
// through Redis's pub/sub when the hot state is there, and through the
// records database (PostgreSQL's NOTIFY, or the SQLite file's changes,
// for processes sharing the data dir). The server's own audits tell it
// directly.
func followNews(ctx context.Context, p *parts) *wake.Hub {
	hub := wake.New()
	if rs, ok := p.store.(*cache.RedisStore); ok {
		go rs.Follow(ctx, hub)
	}
	if p.records != nil {
		go p.records.Follow(ctx, hub)
	}
	return hub
}

// serverConfig is the server's configuration from the running parts and flags.
func serverConfig(p *parts, cfg *config, sf *serveFlags, clientRate []cache.Window, proxies []netip.Prefix, logger *slog.Logger) server.Config {
	// validate checked the records flags already.
	vc, _ := cfg.recordsFlags.verifyConfig(p.identity)
	var v server.Verifier
	if cfg.requestTTL > 0 {
		v = verify.New(p.records, vc)
	}
	return server.Config{
		Auditor: p.auditor, Verifier: v,
		Policy: server.Policy{
			Identity: p.identity, RenderUA: p.browser.UserAgent, Limits: p.limits,
			Scope: scope(cfg), ReportsDurable: true, Timeout: cfg.timeout, MaxRedirects: plainget.DefaultMaxRedirects,
			MaxNavigations: render.MaxNavigations, MaxFrameLoads: render.MaxFrameLoads,
			ClientRate: clientRate, Contact: sf.contact, PrivateAllowed: len(cfg.allowAddr) > 0,
			NoSourceMaps:      cfg.noSourceMaps,
			RequestRecordsTTL: cfg.requestTTL, PublicAddrUnknown: !publicAddrKnown(vc.Egress),
		},
		PublicURL:  sf.publicURL,
		ClientRate: clientRate, TrustedProxies: proxies, ShutdownGrace: sf.grace,
		Joining: sf.join.joining, Mailer: sf.join.mailer, SignInLinkTTL: sf.join.linkTTL,
		// A submitter waits for a queued audit's start at most the hard
		// limit plus a minute; a later start is refused with 429.
		MaxStartWait: cfg.timeout + time.Minute,
		Ready:        readyChecks(p), ContextsInUse: p.browser.ContextsInUse, Logger: logger,
	}
}

// scope says who shares the per-host limits in this configuration.
func scope(cfg *config) server.Scope {
	if cfg.redisURL != "" {
		return server.ScopeInstances
	}
	return server.ScopeMachine
}

// httpServer wraps h with timeouts that still allow the API's long poll.
func httpServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      server.DefaultMaxWait + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// shutdown first stops the audits while HTTP still answers (submissions get
// 503 with Retry-After, /readyz says stopping, reports stay readable, the
// cancelled ones included): running audits get the grace period and are
// then cancelled, queued ones stay in the shared queue. Then it stops
// accepting connections and ends the requests in progress. The caller
// closes the browser and the store.
func shutdown(hs *http.Server, srv *server.Server, auditBudget time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), auditBudget)
	defer cancel()
	err := srv.Shutdown(ctx)
	hctx, hcancel := context.WithTimeout(context.Background(), httpGrace)
	defer hcancel()
	if herr := hs.Shutdown(hctx); herr != nil && !errors.Is(herr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("stop http: %w", herr))
	}
	if err != nil {
		return exitWith(exitFailure, fmt.Errorf("shutdown: %w", err))
	}
	return nil
}

// durable is a store that can say whether it keeps its state across a
// restart; *cache.RedisStore is one.
type durable interface {
	Durability(ctx context.Context) (cache.Durability, error)
}

var _ durable = (*cache.RedisStore)(nil)

// warnDurability warns at start-up when Redis would forget windows, leases
// and the cache on a restart, or evict them.
func warnDurability(ctx context.Context, store cache.Store, stderr io.Writer) {
	d, ok := store.(durable)
	if !ok {
		return
	}
	got, err := d.Durability(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "lekta: warning: could not read Redis's persistence settings: %v\n", err)
		return
	}
	for _, w := range got.Warnings() {
		fmt.Fprintf(stderr, "lekta: warning: %s (see docs/state.md, \"Redis in production\")\n", w)
	}
}

// readyChecks are /readyz's checks: the store answers, the browser is usable.
func readyChecks(p *parts) []server.Check {
	return []server.Check{{Name: "store", Func: p.store.Ping}, {Name: "browser", Func: p.browser.Ping}}
}
