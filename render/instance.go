package render

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// instance is one Chromium process and what belongs to it.
type instance struct {
	b        *Browser
	ctx      context.Context // the chromedp browser context; ends with the process
	cancel   context.CancelFunc
	cdp      *chromedp.Browser
	defProxy *proxy
	peer     peerCheck
	ua       string
	pid      int    // the main process, leader of the browser's process group
	profile  string // its profile directory, deleted with it

	// spare holds the prepared browser contexts, up to Options.Spares.
	spare   chan spareTab
	closing chan struct{}
	mu      sync.Mutex // guards closed, preparing and wg.Add against shutdown
	closed  bool
	// preparing is non-nil while the goroutine that fills spare runs, and
	// closed when it stops, which wakes every render waiting for it.
	preparing chan struct{}
	wg        sync.WaitGroup // the preparing goroutine
	// retiring counts browser contexts being disposed of after their render.
	retiring sync.WaitGroup
	once     sync.Once
}

type spareTab struct {
	t   *tab
	err error
}

// launch starts Chromium, reads its user agent and prepares the first
// browser context. b.mu is held.
func (b *Browser) launch(ctx context.Context) (*instance, error) {
	def, err := newProxy(proxyConfig{dial: b.opts.Dial, deny: true, peer: loopbackOnly, log: b.log})
	if err != nil {
		return nil, fmt.Errorf("start browser: %w", err)
	}
	in, bcancel, err := b.newInstance(def)
	if err != nil {
		def.close()
		return nil, fmt.Errorf("start browser: %w", err)
	}
	bctx := in.ctx
	fail := func(err error) (*instance, error) {
		in.cancel()
		def.close()
		return nil, fmt.Errorf("start browser: %w", err)
	}
	stop := context.AfterFunc(ctx, bcancel)
	err = chromedp.Do(bctx)
	if !stop() {
		return fail(ctx.Err())
	}
	if err != nil {
		return fail(err)
	}
	in.cdp = chromedp.FromContext(bctx).Browser
	vctx, vcancel := context.WithTimeout(ctx, 10*time.Second)
	defer vcancel()
	v, err := cdp.Call(vctx, in.cdp, browser.GetVersion, cdp.Empty{})
	if err != nil {
		return fail(fmt.Errorf("read version: %w", err))
	}
	ua := browserUA(v.UserAgent)
	in.ua = ua
	b.ua = ua
	pid := 0
	if p := in.cdp.Process(); p != nil {
		pid = p.Pid
	}
	in.pid = pid
	in.peer = newPeerCheck(pid)
	b.log.Info("chromium started", "path", b.execPath, "product", v.Product, "pid", pid, "user_agent", ua+b.opts.UASuffix)

	t, err := in.newTab(ctx)
	if err != nil {
		return fail(fmt.Errorf("first browser context: %w", err))
	}
	in.spare <- spareTab{t: t}
	in.checkOmnibox(vctx)
	go in.watch()
	in.replenish()
	return in, nil
}

// newInstance is the instance of a Chromium process not started yet, in
// a profile directory of its own, whose cancel kills the process and
// everything of it and deletes the profile (procgroup.go); bcancel
// cancels its chromedp context alone, which ends a start under way.
func (b *Browser) newInstance(def *proxy) (in *instance, bcancel context.CancelFunc, err error) {
	profile, err := os.MkdirTemp("", "lekta-chromium-")
	if err != nil {
		return nil, nil, fmt.Errorf("profile directory: %w", err)
	}
	opts := append(allocatorOptions(b.execPath, def.addr(), b.auth.spki), processOptions(profile)...)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	logf := func(format string, args ...any) { b.log.Debug(fmt.Sprintf(format, args...), "src", "chromedp") }
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithBrowserOption(
		chromedp.WithBrowserLogf(logf), chromedp.WithBrowserErrorf(logf)))
	in = &instance{
		b: b, ctx: bctx, defProxy: def, profile: profile,
		spare:   make(chan spareTab, b.opts.Spares),
		closing: make(chan struct{}),
	}
	in.cancel = func() {
		alive := in.cdp != nil && !in.dead()
		killGroup(in.pid, alive, profile)
		bcancel()
		acancel()
		if err := removeProfile(profile); err != nil {
			b.log.Warn("delete the browser's profile", "dir", profile, "err", err)
		}
	}
	return in, bcancel, nil
}

// chromeVersion matches the product token of a Chromium user agent.
var chromeVersion = regexp.MustCompile(`(?:Headless)?Chrome/([0-9]+)[0-9.]*`)

// browserUA is the user agent the lane sends, the same whichever binary
// runs: the browser's headless mode calls itself HeadlessChrome with the
// major version only (user-agent reduction), the headless shell adds its
// full version, so the shell's is written as the browser's. Headless it
// says, and headless it stays: the lane never passes for a browser.
func browserUA(ua string) string {
	return chromeVersion.ReplaceAllString(ua, "HeadlessChrome/${1}.0.0.0")
}

// checkOmnibox logs loudly when Chromium runs address-bar popup renderers,
// which cost most of a core per window: the feature names in
// disabledFeatures changed and need updating.
func (in *instance) checkOmnibox(ctx context.Context) {
	res, err := cdp.Call(ctx, in.cdp, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		in.b.log.Warn("list browser targets", "err", err)
		return
	}
	for _, ti := range res.TargetInfos {
		if strings.Contains(ti.URL, "omnibox-popup") {
			in.b.log.Error("CHROMIUM RUNS AN OMNIBOX POPUP RENDERER PER WINDOW: update disabledFeatures in render/flags.go for this Chromium version; each audit costs about twice the CPU",
				"target_url", ti.URL, "target_type", ti.Type)
			return
		}
	}
}

// watch logs an unexpected death of the process.
func (in *instance) watch() {
	select {
	case <-in.cdp.LostConnection:
		select {
		case <-in.closing:
		default:
			in.b.log.Error("chromium exited unexpectedly; the next render starts a new one")
		}
	case <-in.closing:
	}
}

// dead reports whether the process is gone.
func (in *instance) dead() bool {
	select {
	case <-in.cdp.LostConnection:
		return true
	case <-in.ctx.Done():
		return true
	default:
		return false
	}
}

// deathCause is why the process is gone: Close, or a crash.
func (in *instance) deathCause() error {
	select {
	case <-in.closing:
		return ErrClosed
	default:
		return ErrBrowserCrashed
	}
}

// explain turns an error seen while the process died into ErrBrowserCrashed
// (or ErrClosed).
func (in *instance) explain(ctx context.Context, err error) error {
	if ctx.Err() == nil && in.dead() {
		return fmt.Errorf("%w: %w", in.deathCause(), err)
	}
	return err
}

// takeTab returns a prepared browser context: a ready one, else the one
// being prepared, else a new one made now. It does not start preparing the
// next: replenish does, once the render has read its page.
func (in *instance) takeTab(ctx context.Context) (*tab, error) {
	for {
		in.mu.Lock()
		preparing := in.preparing
		in.mu.Unlock()
		// A context put in spare before the preparing stopped is seen here.
		if s, ok := in.ready(); ok {
			return in.use(ctx, s)
		}
		if preparing == nil {
			return in.newTab(ctx)
		}
		select {
		case s := <-in.spare:
			return in.use(ctx, s)
		case <-preparing:
			// It stopped, and another render may have taken the last one.
		case <-in.cdp.LostConnection:
			return nil, ErrBrowserCrashed
		case <-in.closing:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ready takes a prepared context without waiting.
func (in *instance) ready() (spareTab, bool) {
	select {
	case s := <-in.spare:
		return s, true
	default:
		return spareTab{}, false
	}
}

// use returns a prepared context, or a new one when preparing it failed.
func (in *instance) use(ctx context.Context, s spareTab) (*tab, error) {
	if s.err == nil {
		return s.t, nil
	}
	in.b.log.Warn("prepare browser context", "err", s.err)
	return in.newTab(ctx)
}

// retire disposes of a render's browser context in the background; a
// closing instance waits for it.
func (in *instance) retire(t *tab) {
	in.retiring.Go(t.close)
}

// replenish prepares browser contexts in the background, one at a time,
// until Options.Spares are ready (≈0.15 s each that no render waits for),
// unless Options.NoSpare. Renders call it once they have read their page,
// so that at low load a context is prepared while the browser is
// otherwise idle and never competes with a navigation; at full load the
// pool keeps one ready for each renderer.
func (in *instance) replenish() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed || in.preparing != nil || in.b.opts.NoSpare || len(in.spare) >= cap(in.spare) {
		return
	}
	in.preparing = make(chan struct{})
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		for in.prepareOne() {
		}
		in.mu.Lock()
		close(in.preparing)
		in.preparing = nil
		in.mu.Unlock()
	}()
}

// prepareOne puts one new context in spare and reports whether another
// is wanted.
func (in *instance) prepareOne() bool {
	t, err := in.newTab(in.ctx)
	select {
	case in.spare <- spareTab{t: t, err: err}:
	case <-in.closing:
		if t != nil {
			t.close()
		}
		return false
	}
	if err != nil {
		return false // the next render tries again
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return !in.closed && len(in.spare) < cap(in.spare)
}

// shutdown stops the process and everything of it. It is idempotent.
// Chromium is killed rather than asked to close: its profile is a
// temporary directory chromedp deletes, so a graceful close (200 ms, and a
// wait for the context being prepared) buys nothing.
func (in *instance) shutdown() {
	in.once.Do(func() {
		in.mu.Lock()
		in.closed = true
		close(in.closing)
		in.mu.Unlock()
		in.cancel()
		in.wg.Wait()
		in.retiring.Wait()
		for len(in.spare) > 0 {
			if s := <-in.spare; s.t != nil {
				s.t.proxy.close() // its browser context went with the process
			}
		}
		in.defProxy.close()
	})
}
