// Package server is the HTTP face of the auditor: the public form and the
// private report pages (server-rendered html/template, everything embedded),
// the JSON API under /api/v1, the operator-facing /bot policy page, and the
// operational endpoints /healthz, /readyz and /metrics.
//
// Audits run on a bounded background pool fed by a bounded queue; a full
// queue answers 503 with Retry-After before the per-host limiter is asked,
// so a refusal here never charges a host's windows. A submission is only
// peeked at (429 when the windows already say no); the host is charged when
// a renderer takes the audit, and where each audit stands is kept in the
// shared store, so every instance answers for every audit.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

// Defaults of Config.
const (
	DefaultQueue = 16
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
	// Submit validates and admits an audit without contacting the site.
	Submit(ctx context.Context, req audit.Request) (*audit.Ticket, error)
	// Finish runs or joins the ticket's audit and returns its report.
	Finish(ctx context.Context, t *audit.Ticket) (*audit.Report, error)
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
	// Renderers is the number of audits run at a time (default runtime.NumCPU()).
	Renderers int
	// Queue is how many admitted audits may wait for a renderer (default DefaultQueue).
	Queue int
	// ClientRate limits submissions per client address (default DefaultClientRate).
	ClientRate []cache.Window
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// Ready are the checks of /readyz.
	Ready []Check
	// ContextsInUse reports the browser contexts in use for the metrics; nil
	// counts the audits running on the pool instead (an upper bound).
	ContextsInUse func() int
	// Verifier answers /bot/verify and POST /api/v1/verify from the request
	// records; nil when records are off (the answer is then that there is
	// nothing to verify against).
	Verifier Verifier
	// MaxWait caps the API's ?wait= long-poll (default DefaultMaxWait).
	MaxWait time.Duration
	// ShutdownGrace is how long Shutdown lets running audits finish before
	// it cancels them (default DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// Members keeps members, saved sites and history; with Reaudits and
	// Guard it turns on the member API, pages and badges (members.go).
	Members  *records.DB
	Reaudits Reaudits
	Guard    *policy.Guard
	// SitesPerMember and RunsPerHour are the per-member limits
	// (DefaultSitesPerMember, DefaultRunsPerHour).
	SitesPerMember int
	RunsPerHour    int
	Logger         *slog.Logger
	Now            func() time.Time
}

// Server serves the form, the reports, the API and /bot, and runs audits
// in the background. Create it with New; stop it with Shutdown.
type Server struct {
	cfg     Config
	pool    *pool
	clients *clientLimiter
	// verifies limits verifications per client, as clients does submissions.
	verifies *clientLimiter
	metrics  *metrics
	steps    *steps
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
}

// New validates cfg, starts the pool's workers and returns the Server.
func New(cfg Config) (*Server, error) {
	if cfg.Auditor == nil {
		return nil, errors.New("server: an Auditor is required")
	}
	if cfg.Renderers <= 0 {
		cfg.Renderers = runtime.NumCPU()
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
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
	if cfg.Members != nil && (cfg.Reaudits == nil || cfg.Guard == nil) {
		return nil, errors.New("server: Members needs Reaudits and Guard")
	}
	pg, err := newPages()
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{cfg: cfg, pages: pg, clients: newClientLimiter(cfg.ClientRate, cfg.Now),
		verifies: newClientLimiter(cfg.ClientRate, cfg.Now), steps: newSteps(),
		durations: newDurations(cfg.Policy.Typical)}
	if s.apiReference, err = apiPage(pg); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if s.botPolicy, err = botPage(pg, cfg.Policy, s.durations); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.pool = newPool(cfg.Queue, cfg.Now)
	s.metrics = newMetrics(s.pool, cfg.ContextsInUse)
	s.mux = s.routes()
	s.handler = secure(s.mux)
	s.pool.start(cfg.Renderers, s.finishRun)
	return s, nil
}

// Handler returns the server's routes wrapped in the security headers.
func (s *Server) Handler() http.Handler { return s.handler }

// Shutdown stops taking submissions (they get 503 with Retry-After), ends
// queued audits at once with status cancelled and the reason "the service
// was shutting down" (they never reached the site and were never charged
// against its windows), lets running audits finish for Config.ShutdownGrace
// and then cancels them the same way, and waits for the workers and joins,
// or for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.pool.shutdown(ctx, s.cfg.ShutdownGrace)
}

// Running reports how many audits are queued or running in this process.
func (s *Server) Running() int { return s.pool.active() }

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
