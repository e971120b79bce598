// Package server is the HTTP face of the auditor: the public form and the
// private report pages (server-rendered html/template, everything embedded),
// the JSON API under /api/v1, the operator-facing /bot policy page, and the
// operational endpoints /healthz, /readyz and /metrics.
//
// Audits wait in one durable queue shared by every instance (River, through
// Config.Queue): a submission reserves the start its host's windows allow
// and is queued for then (202 with starts_at), or refused with 429 when
// that start is further away than Config.MaxStartWait; the host is charged
// when a renderer takes the audit, and where each audit stands is kept in
// the shared store, so every instance answers for every audit.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/wake"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

// Defaults of Config.
const (
	// DefaultMaxStartWait is the longest a submitter waits for a queued
	// audit's start: the 75 s hard limit plus a minute.
	DefaultMaxStartWait = audit.DefaultTimeout + time.Minute
	// DefaultMaxWait caps the ?wait= long-poll of the API.
	DefaultMaxWait = 60 * time.Second
	// DefaultShutdownGrace is how long running audits may take to finish
	// once shutdown begins.
	DefaultShutdownGrace = 20 * time.Second
	// queueRetryAfter is the Retry-After of a full queue or a stopping server.
	queueRetryAfter = 10 * time.Second
	// storeRetryAfter is the Retry-After when the store or database did not answer.
	storeRetryAfter = 5 * time.Second
)

// DefaultClientRate is the per-client submission limit: 10 a minute.
var DefaultClientRate = []cache.Window{{N: 10, Per: time.Minute}}

// Auditor is the pipeline as the server uses it; *audit.Auditor implements it.
type Auditor interface {
	// Submit validates an audit and reserves its start without contacting
	// the site.
	Submit(ctx context.Context, req audit.Request) (*audit.Ticket, error)
	// Unreserve gives back a start Submit reserved.
	Unreserve(ctx context.Context, t *audit.Ticket) error
	// Run starts a queued audit and returns its report.
	Run(ctx context.Context, req audit.Request) (*audit.Report, error)
	// Lost answers for an audit whose instance stopped while it ran.
	Lost(ctx context.Context, req audit.Request) (*audit.Report, error)
	// Report returns a stored report, or audit.ErrNotFound.
	Report(ctx context.Context, id string) (*audit.Report, error)
	// Cached returns a fresh cached report of a URL without charging any
	// limit, or nil.
	Cached(ctx context.Context, rawURL string) (*audit.Report, error)
	// Queued records in the shared store that a ticket waits in the queue.
	Queued(ctx context.Context, t *audit.Ticket, position int) error
	// Progress returns where an audit queued or running on any instance
	// stands.
	Progress(ctx context.Context, id string) (cache.Progress, bool, error)
}

var _ Auditor = (*audit.Auditor)(nil)

// Check is one readiness check of /readyz, such as the store's Ping.
type Check struct {
	Name string
	Func func(ctx context.Context) error
}

// Config is what a Server needs. Auditor is required; the rest has defaults.
type Config struct {
	Auditor Auditor
	// Policy is what /bot shows; it must describe the configuration in force.
	Policy Policy
	// PublicURL is the absolute http(s) address this instance is reached
	// at (--public-url; see ParsePublicURL), "" when it is not known. With
	// it, the addresses the server gives out for use elsewhere (badges,
	// the links of /bot) are absolute; without it they are paths. An https
	// one also makes the member session cookie Secure.
	PublicURL string
	// Queue is the shared queue audits wait in; required.
	Queue Queue
	// MaxStartWait is the longest a queued audit may wait for its start;
	// a submission whose host allows a start only later gets 429 (default
	// DefaultMaxStartWait).
	MaxStartWait time.Duration
	// ClientRate limits submissions per client address (default DefaultClientRate).
	ClientRate []cache.Window
	// TrustedProxies are the peers whose X-Forwarded-For (and
	// X-Forwarded-Proto) is believed.
	TrustedProxies []netip.Prefix
	// Ready are the checks of /readyz.
	Ready []Check
	// ContextsInUse reports the browser contexts in use for the metrics; nil
	// counts the audits running in this process instead (an upper bound).
	ContextsInUse func() int
	// Verifier answers /bot/verify and POST /api/v1/verify from the request
	// records; nil when records are off (the answer is then that there is
	// nothing to verify against).
	Verifier Verifier
	// MaxWait caps the API's ?wait= long-poll (default DefaultMaxWait).
	MaxWait time.Duration
	// Wake wakes the waiters of a report (a ?wait=, the running report
	// page) when it is stored. This process's audits signal it; the caller
	// makes it follow other instances too (cache.RedisStore.Follow,
	// records.DB.Follow). Nil: a hub of its own, which hears this
	// process's audits only.
	Wake *wake.Hub
	// WaitFallback is how often a waiter reads the store when no news
	// came, in case some was lost (default DefaultWaitFallback).
	WaitFallback time.Duration
	// ShutdownGrace is how long Shutdown lets running audits finish before
	// it cancels them (default DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// Members keeps members, saved sites and history; with Guard it turns
	// on the member API, pages and badges (members.go), whose re-audits run
	// on Queue.
	Members *records.DB
	Guard   *policy.Guard
	// SitesPerMember and RunsPerHour are the per-member limits
	// (DefaultSitesPerMember, DefaultRunsPerHour).
	SitesPerMember int
	RunsPerHour    int
	Logger         *slog.Logger
	Now            func() time.Time

	// Joining is how people become members (JoinClosed by default; see
	// join.go). JoinOpen needs Mailer and PublicURL: the links it mails
	// are absolute.
	Joining Joining
	// Mailer sends the sign-in links people ask for under JoinOpen.
	Mailer Mailer
	// SignInLinkTTL is how long a sign-in link works (DefaultSignInLinkTTL).
	SignInLinkTTL time.Duration
}

// Server serves the form, the reports, the API and /bot, and runs audits
// in the background. Create it with New; stop it with Shutdown.
type Server struct {
	cfg Config
	// stopping is set when shutdown begins: submissions get 503.
	stopping atomic.Bool
	// halt is cancelled (cause shuttingDown) when the shutdown's grace
	// period ends: running audits stop then.
	halt       context.Context
	cancelHalt context.CancelCauseFunc
	// running counts the audits running in this process.
	running atomic.Int64
	// stopOnce stops the queue once; stopErr is its answer.
	stopOnce sync.Once
	stopErr  error
	// drained is closed once the queue has stopped on shutdown: running
	// audits ended (their reports stored), queued ones handed back. A
	// waiting ?wait= then answers at once with the audit's state.
	drained chan struct{}
	clients *clientLimiter
	// verifies limits verifications per client, as clients does submissions.
	verifies *clientLimiter
	metrics  *metrics
	// durations are the recent audits' wall times, for /bot and the
	// progress page.
	durations *durations
	pages     *pages
	mux       *http.ServeMux
	handler   http.Handler
	// apiReference is /api, rendered from openapi.json.
	apiReference http.Handler
	// botPolicy is /bot.
	botPolicy http.Handler
	// mailing counts the sign-in links being mailed.
	mailing sync.WaitGroup
}

// New validates cfg and returns the Server; the queue starts working
// audits once the caller starts it with the Server as its Runner.
func New(cfg Config) (*Server, error) {
	if cfg.Auditor == nil || cfg.Queue == nil {
		return nil, errors.New("server: an Auditor and a Queue are required")
	}
	cfg.defaults()
	if cfg.PublicURL != "" {
		u, err := ParsePublicURL(cfg.PublicURL)
		if err != nil {
			return nil, fmt.Errorf("server: public URL %q: %w", cfg.PublicURL, err)
		}
		cfg.PublicURL = u
	}
	if cfg.Members != nil && cfg.Guard == nil {
		return nil, errors.New("server: Members needs a Guard")
	}
	if err := checkJoining(&cfg); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	pg, err := newPages()
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{cfg: cfg, pages: pg, clients: newClientLimiter(cfg.ClientRate, cfg.Now),
		verifies: newClientLimiter(cfg.ClientRate, cfg.Now), durations: newDurations(cfg.Policy.Typical),
		drained: make(chan struct{})}
	s.halt, s.cancelHalt = context.WithCancelCause(context.Background())
	if s.apiReference, err = apiPage(pg); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if s.botPolicy, err = botPage(pg, cfg.Policy, s.link, s.durations); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.metrics = newMetrics(s, cfg.ContextsInUse)
	s.mux = s.routes()
	s.handler = secure(s.mux)
	return s, nil
}

// defaults fills in what cfg leaves unset.
func (cfg *Config) defaults() {
	if cfg.MaxStartWait <= 0 {
		cfg.MaxStartWait = DefaultMaxStartWait
	}
	if len(cfg.ClientRate) == 0 {
		cfg.ClientRate = DefaultClientRate
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	if cfg.Wake == nil {
		cfg.Wake = wake.New()
	}
	if cfg.WaitFallback <= 0 {
		cfg.WaitFallback = DefaultWaitFallback
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SitesPerMember <= 0 {
		cfg.SitesPerMember = DefaultSitesPerMember
	}
	if cfg.RunsPerHour <= 0 {
		cfg.RunsPerHour = DefaultRunsPerHour
	}
}

// Handler returns the server's routes wrapped in the security headers.
func (s *Server) Handler() http.Handler { return s.handler }

// Shutdown stops taking submissions (they get 503 with Retry-After), lets
// the audits running here finish for Config.ShutdownGrace and then cancels
// them (status cancelled, "the service was shutting down"; one that had
// not reached the site yet goes back to the queue), and stops the queue,
// waiting for its workers or for ctx, and then for the sign-in links being
// mailed. Audits still queued stay queued: another instance, or this
// one's next start, runs them.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.stopping.Store(true)
		t := time.AfterFunc(s.cfg.ShutdownGrace, func() { s.cancelHalt(shuttingDown) })
		defer t.Stop()
		defer s.cancelHalt(shuttingDown)
		s.stopErr = s.cfg.Queue.Stop(ctx)
		close(s.drained)
		s.waitMail(ctx)
	})
	return s.stopErr
}

// Running reports how many audits are running in this process.
func (s *Server) Running() int { return int(s.running.Load()) }

// logAudit writes the one line per audit: never page content.
func (s *Server) logAudit(id, host string, trigger audit.Trigger, outcome string, r *audit.Report) {
	if len(host) > 253 {
		host = host[:253]
	}
	attrs := []any{"id", id, "host", host, "trigger", string(trigger), "outcome", outcome}
	if r != nil {
		attrs = append(attrs, "duration_ms", r.DurationMS,
			"plain_ms", r.Lanes.Plain.DurationMS, "render_ms", r.Lanes.Render.DurationMS)
	}
	s.cfg.Logger.Info("audit", attrs...)
}
