package render

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"lekta.dev/lekta/compare"
)

// Defaults of Options.
const (
	DefaultSettleTimeout = 10 * time.Second
	DefaultBudget        = 5 * time.Second
	DefaultMaxRequests   = 300
	DefaultMaxBytes      = 50 << 20
	DefaultMaxBodyBytes  = 15 << 20
)

// Options configure the browser.
type Options struct {
	// ExecPath is the browser binary; "" searches chromium, chromium-browser, google-chrome on PATH.
	ExecPath string
	// Dial makes every connection of the browser (through the in-process
	// proxy). It is the SSRF guard and is required.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// CheckURL validates the URL to render and every main-frame navigation
	// and redirect hop; nil allows any http or https URL.
	CheckURL func(u *url.URL) error
	// UASuffix is appended to the browser's own user agent, e.g. " LektaBot/0.1 (+https://lekta.dev/bot)".
	UASuffix string
	// Logger receives the lane's diagnostics; nil discards them.
	Logger *slog.Logger
	// RootCAs verify the sites' TLS certificates, which the lane's proxy
	// checks itself (it terminates the browser's TLS); nil means the
	// system's roots.
	RootCAs *x509.CertPool

	// Budget is the page time a render lets the page have (DefaultBudget):
	// timers, fetch() chains and layout-triggered callbacks within it are
	// waited for, and page time stands still while requests are in flight
	// (settle.go).
	Budget time.Duration
	// SettleTimeout caps, in wall time from the main document's arrival,
	// the wait for the page to finish (DefaultSettleTimeout); a render that
	// hits it, or the caller's deadline, has Settled false and SettledBy
	// "deadline".
	SettleTimeout time.Duration
	// ViewportWidth and ViewportHeight are the page's viewport in CSS
	// pixels (1280 by 5000 by default): tall, as search engines' renderers
	// use, so sections that appear when scrolled into view are in view.
	ViewportWidth, ViewportHeight int64
	// MaxRequests and MaxBytes are the per-audit proxy budget
	// (DefaultMaxRequests, DefaultMaxBytes); requests past it are refused
	// and counted as "budget".
	MaxRequests int
	MaxBytes    int64
	// MaxBodyBytes caps the serialized DOM (DefaultMaxBodyBytes); a longer
	// one is cut and the snapshot marked Truncated.
	MaxBodyBytes int
	// NoSpare stops the browser from preparing browser contexts ahead of
	// the renders: for a process that renders once (lekta audit), where a
	// spare would only compete for the CPU. A later Render then creates its
	// context when it starts.
	NoSpare bool
	// Spares is how many browser contexts are kept prepared (1 when 0):
	// as many as renders run at once, so that none waits for one at full
	// load. A context taken is replaced once its render has read the page,
	// not while it loads, so preparing never competes with a navigation
	// unless renders queue for contexts.
	Spares int
	// NoCauses leaves out the write recorder that names the script behind
	// each difference (causes.go); benchmarks measure its cost with it.
	NoCauses bool
	// NoSourceMaps: never fetch a script's external source map to name
	// the original file behind a cause (inline maps are still read).
	NoSourceMaps bool
}

func (o Options) withDefaults() Options {
	o.Spares = max(o.Spares, 1)
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = DefaultSettleTimeout
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.ViewportWidth <= 0 {
		o.ViewportWidth = 1280
	}
	if o.ViewportHeight <= 0 {
		o.ViewportHeight = 5000
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.CheckURL == nil {
		o.CheckURL = func(*url.URL) error { return nil }
	}
	return o
}

// Request is one render.
type Request struct {
	// URL is the page to render; it must pass Options.CheckURL.
	URL string
	// AllowSameOrigin is asked for every request to the page's own origin
	// (subresources included); a false answer blocks it with reason "robots"
	// and rule recorded. It is called from another goroutine than Render's,
	// one call at a time.
	AllowSameOrigin func(u *url.URL) (allowed bool, rule string)
	// CheckNavigation, when set, is asked after Options.CheckURL for every
	// main-frame document request: the page, later navigations and each
	// redirect hop. An error refuses the request; Render then fails with an
	// error wrapping ErrURLRefused and this error. The audit uses it for
	// robots.txt, whose rules differ per origin. Same goroutine rules as
	// AllowSameOrigin.
	CheckNavigation func(u *url.URL) error
	// Sent, when set, is told of every request that left through the
	// lane's proxy to a site (the document, subresources, workers' fetches,
	// redirect hops), once its response body ended or it failed; never of
	// a request the lane refused. It is called from the proxy's
	// goroutines, possibly at once, and possibly after Render returned for
	// a body still streaming then.
	Sent func(Sent)

	// afterSettle, set by tests, runs after the page settled and before
	// the DOM snapshot.
	afterSettle func(ctx context.Context, t *tab)
}

// Browser is one Chromium process serving renders, safe for concurrent use.
// A fresh browser context (its own proxy, cookies, storage) serves each
// render, and the next one is prepared while the current render runs. When
// Chromium dies, the next Render starts a new one.
type Browser struct {
	opts     Options
	execPath string
	log      *slog.Logger
	// auth makes the certificates the proxies show the browser; its key
	// is the one the browser trusts, for the life of the Browser.
	auth *authority

	// inUse counts the renders holding a browser context.
	inUse atomic.Int64

	mu     sync.Mutex
	inst   *instance
	ua     string // the browser's own user agent
	closed bool
}

// Start launches the browser. ctx bounds the start-up only.
func Start(ctx context.Context, opts Options) (*Browser, error) {
	opts = opts.withDefaults()
	if opts.Dial == nil {
		return nil, errors.New("start browser: Options.Dial is required (the SSRF guard)")
	}
	path, err := FindBrowser(opts.ExecPath)
	if err != nil {
		return nil, err
	}
	auth, err := newAuthority()
	if err != nil {
		return nil, fmt.Errorf("start browser: %w", err)
	}
	b := &Browser{opts: opts, execPath: path, log: opts.Logger, auth: auth}
	b.mu.Lock()
	defer b.mu.Unlock()
	in, err := b.launch(ctx)
	if err != nil {
		return nil, err
	}
	b.inst = in
	return b, nil
}

// UserAgent is the user agent renders send: the browser's own plus
// Options.UASuffix.
func (b *Browser) UserAgent() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ua + b.opts.UASuffix
}

// Render loads req.URL in a fresh browser context and returns the settled
// DOM. Errors wrap ErrURLRefused, ErrNavigationFailed, ErrRenderTimeout,
// ErrPageCrashed, ErrBrowserCrashed, ErrClosed or the context's error.
func (b *Browser) Render(ctx context.Context, req Request) (*compare.Snapshot, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("render %s: %w", req.URL, err)
	}
	u, err := b.checkTarget(req.URL)
	if err != nil {
		return nil, err
	}
	in, err := b.instance(ctx)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", req.URL, err)
	}
	t, err := in.takeTab(ctx)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", req.URL, in.explain(ctx, err))
	}
	b.inUse.Add(1)
	defer b.inUse.Add(-1)
	// The browser is done with the page once Render returns (it has read
	// it, or failed): prepare the next context then, while the report is
	// made, rather than during this navigation.
	defer in.replenish()
	// The context is disposed of after Render returns: the report does not
	// wait for it.
	defer in.retire(t)
	a := newAudit(b, in, t, req, u, start)
	a.stages.timing.Context = time.Since(start)
	t.proxy.setRules(&rules{userAgent: in.ua + b.opts.UASuffix, allow: a.allowSameOrigin, sent: req.Sent})
	snap, err := a.run(ctx)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", req.URL, err)
	}
	return snap, nil
}

// checkTarget parses the URL to render and runs CheckURL on it.
func (b *Browser) checkTarget(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w: %w", raw, ErrURLRefused, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("render %s: %w: only http and https URLs", raw, ErrURLRefused)
	}
	if err := b.opts.CheckURL(u); err != nil {
		return nil, fmt.Errorf("render %s: %w: %w", raw, ErrURLRefused, err)
	}
	return u, nil
}

// instance returns the running Chromium, starting a new one if the last
// one died.
func (b *Browser) instance(ctx context.Context) (*instance, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if b.inst != nil && !b.inst.dead() {
		return b.inst, nil
	}
	if old := b.inst; old != nil {
		b.log.Warn("chromium died; starting a new one")
		b.inst = nil
		old.shutdown()
	}
	in, err := b.launch(ctx)
	if err != nil {
		return nil, err
	}
	b.inst = in
	return in, nil
}

// Close stops the browser. Renders in flight fail.
func (b *Browser) Close() error {
	b.mu.Lock()
	in := b.inst
	b.inst = nil
	b.closed = true
	b.mu.Unlock()
	if in != nil {
		in.shutdown()
	}
	return nil
}
