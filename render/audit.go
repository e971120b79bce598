package render

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"lekta.dev/lekta/compare"
)

// Limits of one render.
const (
	// MaxNavigations caps main-frame navigations after the first (meta
	// refresh, Refresh header, location=); later ones are refused.
	MaxNavigations = 3
	// MaxRedirects caps the redirect hops of every request chain: each
	// main-frame navigation, each frame document, and every subresource,
	// worker or fetch() request (counted by the proxy).
	MaxRedirects = 5
	// MaxFrameLoads caps the documents loaded into frames other than the
	// main one (iframes, their navigations) per render.
	MaxFrameLoads = 20
	// navigationTimeout bounds the wait for the main document when the
	// caller set no deadline.
	navigationTimeout = 30 * time.Second
	// snapshotTimeout bounds the DOM snapshot when the caller set no deadline.
	snapshotTimeout = 5 * time.Second
	// maxMessages caps console errors, exceptions and failed requests kept.
	maxMessages = 50
	// maxMessageLen caps the length of one kept message.
	maxMessageLen = 500
)

// audit is the state of one render.
type audit struct {
	b     *Browser
	in    *instance
	t     *tab
	req   Request
	u     *url.URL
	start time.Time
	opts  Options
	// origin is the page's scheme://host[:port], for AllowSameOrigin; the
	// worker goroutine moves it (followOrigin), the proxy reads it.
	originMu  sync.Mutex
	origin    string
	allowMu   sync.Mutex // one AllowSameOrigin call at a time
	mainFrame cdp.FrameID
	// cancel ends the render with a cause (a crash).
	cancel context.CancelCauseFunc

	net netTracker
	rec recorder

	qmu   sync.Mutex
	queue []any
	wake  chan struct{}

	// Main-frame navigation state; only the worker goroutine writes it.
	navMu   sync.Mutex
	navSeen bool
	navs    int
	hops    int
	navErr  error // why the last main-frame navigation was refused
	// chain holds the URLs of the current main-frame navigation and its
	// redirect hops, so a redirect loop is refused instead of followed.
	chain []string
	// frameLoads counts documents loaded into frames other than the main
	// one; frameHops the redirect hops of each frame document request.
	frameLoads int
	frameHops  map[network.RequestID]int
	// endSettle stops the wait for the page to settle (the navigation cap
	// was passed by navigations no request shows, such as blob: URLs).
	endSettle context.CancelFunc
	// budgetExpired receives when a grant of page time ran out.
	budgetExpired chan struct{}
	// loadFired is closed at the page's first load event.
	loadFired chan struct{}
	loadOnce  sync.Once
	// refresh is the main document's pending refresh.
	refresh refreshState
	// listenerMark is the attribute markListeners set on anchors with event
	// listeners before the snapshot ("" when none); run's goroutine only.
	listenerMark string
	// refused lists the features of refusalsJS the page tried.
	refused []string
	// causes is what the write recorder saw, read before the snapshot.
	causes causes
	// causesReply receives the recorder's answers (its binding's calls).
	causesReply chan string
	// inits are the initiator stacks of the page's requests.
	inits initiators
	// sourceMaps counts the source maps fetched for the causes.
	sourceMaps atomic.Int64
	// clock is the page time granted so far, for the time of a client
	// navigation (known to within one grant).
	clock pageClock
	// stages is where the render's wall time went.
	stages stageClock
}

// pageClock is page time granted so far, shared with the event goroutine.
type pageClock struct {
	ns atomic.Int64
	// refresh is the page time at which the current document's refresh
	// is due (its load plus its delay), 0 when none is known.
	refresh atomic.Int64
}

func (c *pageClock) set(d time.Duration) { c.ns.Store(int64(d)) }
func (c *pageClock) at() time.Duration   { return time.Duration(c.ns.Load()) }

// seen notes what a page-state reading says of the refresh to come.
func (c *pageClock) seen(st pageState) {
	if st.Refresh >= 0 && st.Load > 0 {
		c.refresh.Store(int64((st.Load + st.Refresh) * float64(time.Millisecond)))
	}
}

// refreshAt is when the document's refresh was due, else at().
func (c *pageClock) refreshAt() time.Duration {
	if r := c.refresh.Load(); r > 0 {
		return time.Duration(r)
	}
	return c.at()
}

func newAudit(b *Browser, in *instance, t *tab, req Request, u *url.URL, start time.Time) *audit {
	a := &audit{
		b: b, in: in, t: t, req: req, u: u, start: start, opts: b.opts,
		origin:        origin(u),
		mainFrame:     cdp.FrameID(t.target.TargetID),
		wake:          make(chan struct{}, 1),
		frameHops:     make(map[network.RequestID]int),
		endSettle:     func() {},
		budgetExpired: make(chan struct{}, 1),
		causesReply:   make(chan string, 1),
		loadFired:     make(chan struct{}),
	}
	a.net.init()
	a.rec.init()
	a.refresh.document("")
	return a
}

// pageOrigin is the origin whose requests robots.txt is asked about.
func (a *audit) pageOrigin() string {
	a.originMu.Lock()
	defer a.originMu.Unlock()
	return a.origin
}

// allowSameOrigin asks Request.AllowSameOrigin about u when u is of the
// page's origin; everything else is allowed here (the guard and the other
// rules still apply). It is called from the Fetch worker and from the
// proxy's goroutines, one call at a time.
func (a *audit) allowSameOrigin(u *url.URL) (bool, string) {
	if a.req.AllowSameOrigin == nil || origin(u) != a.pageOrigin() {
		return true, ""
	}
	a.allowMu.Lock()
	defer a.allowMu.Unlock()
	return a.req.AllowSameOrigin(u)
}

// origin is u's scheme://host[:port] as Chromium serializes it.
func origin(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host
}

// run renders the page. Every goroutine it starts has ended when it returns.
func (a *audit) run(ctx context.Context) (*compare.Snapshot, error) {
	rctx, cancel := context.WithCancelCause(ctx)
	a.cancel = cancel
	defer cancel(nil)
	stop, err := a.listen()
	if err != nil {
		return nil, a.explain(ctx, rctx, err)
	}
	defer stop()

	var sameOrigin string
	if a.req.AllowSameOrigin != nil {
		sameOrigin = a.pageOrigin()
	}
	navStart := time.Now()
	a.stages.startNavigation(navStart)
	if _, err := cdp.Call(rctx, a.t.target, fetch.Enable, fetch.EnableParams{Patterns: fetchPatterns(sameOrigin)}); err != nil {
		return nil, a.explain(ctx, rctx, fmt.Errorf("enable request interception: %w", err))
	}
	d := a.deadlines(ctx)
	if err := a.navigate(ctx, rctx, d.navigate); err != nil {
		return nil, err
	}
	settleStart := time.Now()
	a.stages.timing.Navigate = settleStart.Sub(navStart)
	sctx, endSettle := context.WithCancel(rctx)
	a.navMu.Lock()
	a.endSettle = endSettle
	a.navMu.Unlock()
	settled := a.settle(sctx, d)
	endSettle()
	a.stages.timing.Settle = time.Since(settleStart)
	if err := context.Cause(rctx); err != nil {
		return nil, a.explain(ctx, rctx, err)
	}
	if a.req.afterSettle != nil {
		a.req.afterSettle(rctx, a.t)
	}
	snapBy := time.Now().Add(snapshotTimeout)
	if !d.hard.IsZero() {
		snapBy = d.hard
	}
	snapCtx, scancel := context.WithDeadline(rctx, snapBy)
	defer scancel()
	snapStart := time.Now()
	dom, err := a.snapshot(snapCtx)
	a.stages.timing.Snapshot = time.Since(snapStart)
	if err != nil {
		return nil, a.explain(ctx, rctx, fmt.Errorf("snapshot: %w", err))
	}
	return a.assemble(dom, settled), nil
}

// listen starts handling the page's events: in order on chromedp's reader
// goroutine, and the commands they call for (Fetch decisions, dialogs,
// popups) on one worker goroutine. A dead browser cancels the render. stop
// ends all of it and waits.
func (a *audit) listen() (stop func(), err error) {
	lctx, lcancel := context.WithCancel(a.t.ctx)
	var wg sync.WaitGroup
	stop = func() {
		lcancel()
		wg.Wait()
	}
	if err := chromedp.Listen(lctx, a.onEvent); err != nil {
		stop()
		return nil, fmt.Errorf("listen: %w", err)
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		a.work(lctx)
	}()
	go func() {
		defer wg.Done()
		select {
		case <-a.in.cdp.LostConnection:
			a.cancel(a.in.deathCause())
		case <-lctx.Done():
		}
	}()
	return stop, nil
}

// deadlines of one render.
type deadlines struct {
	// hard is the caller's deadline (zero: none).
	hard time.Time
	// work is when navigating and settling must end, leaving time for
	// the snapshot before hard.
	work time.Time
	// navigate bounds the navigation (the main document's response).
	navigate time.Time
}

// deadlines splits the caller's time. Without a deadline, the navigation
// gets navigationTimeout; settling always ends at SettleTimeout after the
// navigation or at work, whichever comes first.
func (a *audit) deadlines(ctx context.Context) deadlines {
	now := time.Now()
	d := deadlines{navigate: now.Add(navigationTimeout), work: now.Add(navigationTimeout + a.opts.SettleTimeout)}
	if hard, ok := ctx.Deadline(); ok {
		reserve := min(max(hard.Sub(now)/5, 250*time.Millisecond), 2*time.Second)
		d.hard, d.work = hard, hard.Add(-reserve)
		if d.work.Before(d.navigate) {
			d.navigate = d.work
		}
	}
	return d
}

// navigate loads the page; only the URL that passed CheckURL is passed.
func (a *audit) navigate(ctx, rctx context.Context, by time.Time) error {
	nctx, ncancel := context.WithDeadline(rctx, by)
	defer ncancel()
	res, err := cdp.Call(nctx, a.t.target, page.Navigate, page.NavigateParams{URL: a.u.String()})
	if err != nil {
		return a.explain(ctx, rctx, fmt.Errorf("navigate: %w", err))
	}
	if res.IsDownload {
		return fmt.Errorf("%w: the URL is a download, not a page", ErrNavigationFailed)
	}
	if res.ErrorText != "" {
		return a.navigationError(res.ErrorText)
	}
	if why := a.net.refusedMain(); why != "" {
		return a.proxyRefusal(a.net.mainURL(), why)
	}
	return nil
}

// navigationError explains a failed first navigation.
func (a *audit) navigationError(errorText string) error {
	a.navMu.Lock()
	navErr := a.navErr
	a.navMu.Unlock()
	if navErr != nil {
		return navErr
	}
	if reason := a.rec.blockedDocument(); reason != "" {
		return fmt.Errorf("%w: %s: blocked (%s)", ErrNavigationFailed, a.net.mainURL(), reason)
	}
	return a.proxyRefusal(a.net.mainURL(), errorText)
}

// proxyRefusal wraps the guard's dial error for the document at raw, when
// the proxy recorded one.
func (a *audit) proxyRefusal(raw, why string) error {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		if derr := a.t.proxy.refusal(hostPort(u)); derr != nil {
			return fmt.Errorf("%w: %s: %w", ErrNavigationFailed, raw, derr)
		}
	}
	return fmt.Errorf("%w: %s", ErrNavigationFailed, why)
}

// explain turns an error into the render's error: a crash cause, a dead
// browser, the caller's deadline or cancellation, or an internal timeout.
func (a *audit) explain(ctx, rctx context.Context, err error) error {
	cause := context.Cause(rctx)
	switch {
	case errors.Is(cause, ErrPageCrashed) || errors.Is(cause, ErrBrowserCrashed) || errors.Is(cause, ErrClosed):
		return cause
	case a.in.dead():
		return fmt.Errorf("%w: %w", a.in.deathCause(), err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: %w", ErrRenderTimeout, err)
		}
		return fmt.Errorf("%w: %w: %v", ErrRenderTimeout, ctx.Err(), err)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", ErrRenderTimeout, err)
	}
	return err
}

// enqueue hands an event that needs commands to the worker.
func (a *audit) enqueue(ev any) {
	a.qmu.Lock()
	a.queue = append(a.queue, ev)
	a.qmu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// work runs the commands that events call for, until ctx ends.
func (a *audit) work(ctx context.Context) {
	for {
		select {
		case <-a.wake:
		case <-ctx.Done():
			return
		}
		a.qmu.Lock()
		items := a.queue
		a.queue = nil
		a.qmu.Unlock()
		for _, it := range items {
			a.handle(ctx, it)
		}
	}
}
