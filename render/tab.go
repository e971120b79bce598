package render

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// acceptLanguage is the languages the lane's browser asks for, as
// Chromium's default profile does (Accept-Language: en-US,en;q=0.9).
const acceptLanguage = "en-US,en"

// disposeTimeout bounds the disposal of a browser context.
const disposeTimeout = 5 * time.Second

// tab is one audit's browser context: its own proxy listener (so traffic
// and budget are counted per audit), one page target, downloads denied,
// service workers bypassed, the user agent set.
type tab struct {
	ctx       context.Context // chromedp context of the page target
	cancel    context.CancelFunc
	proxy     *proxy
	target    *chromedp.Target
	browser   *chromedp.Browser
	contextID cdp.BrowserContextID
	log       *slog.Logger
	once      sync.Once
	opts      Options
	// stateKey names the page-state script's property (settle.go).
	stateKey string
	// bindingName is the CDP binding the write recorder answers through
	// and readEvent the event it answers (causes.go); both fresh per tab.
	bindingName, readEvent string
}

// newTab creates a browser context and a page in it. ctx bounds the creation.
func (in *instance) newTab(ctx context.Context) (*tab, error) {
	o := in.b.opts
	p, err := newProxy(proxyConfig{
		dial: o.Dial, budget: budget{requests: o.MaxRequests, bytes: o.MaxBytes},
		peer: in.peer, auth: in.b.auth, roots: o.RootCAs, log: in.b.log,
	})
	if err != nil {
		return nil, err
	}
	tctx, cancel := chromedp.NewContext(in.ctx, chromedp.WithNewBrowserContext(func(cp *target.CreateBrowserContextParams) {
		cp.ProxyServer = "http://" + p.addr()
		cp.ProxyBypassList = "<-loopback>"
	}))
	p.bodies.off = o.NoCauses
	t := &tab{ctx: tctx, cancel: cancel, proxy: p, log: in.b.log, opts: o, stateKey: stateKey(), bindingName: stateKey(), readEvent: stateKey()}
	// The first Do creates the context and the target and binds their life
	// to tctx, so bound the creation by ctx separately.
	stop := context.AfterFunc(ctx, cancel)
	err = chromedp.Do(tctx)
	stopped := stop()
	if err == nil && !stopped {
		err = ctx.Err()
	}
	if err != nil {
		t.close()
		return nil, fmt.Errorf("create browser context: %w", err)
	}
	c := chromedp.FromContext(tctx)
	t.target, t.browser, t.contextID = c.Target, c.Browser, c.BrowserContextID
	if err := t.setup(ctx, in.ua+o.UASuffix); err != nil {
		t.close()
		return nil, fmt.Errorf("set up browser context: %w", err)
	}
	return t, nil
}

// setup applies the per-context settings.
func (t *tab) setup(ctx context.Context, ua string) error {
	// The settings are independent: send them at once, one round trip
	// for all (a cold start waits for them).
	steps := []struct {
		what string
		call func() error
	}{
		{"deny downloads", func() error {
			_, err := cdp.Call(ctx, t.browser, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorDeny, BrowserContextID: t.contextID,
			})
			return err
		}},
		{"bypass service workers", func() error {
			_, err := cdp.Call(ctx, t.target, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true})
			return err
		}},
		{"set user agent", func() error {
			// The languages are the browser's defaults, spelled out so that
			// the headless shell (which offers en-US only) sends the same.
			_, err := cdp.Call(ctx, t.target, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: acceptLanguage})
			return err
		}},
		{"set viewport", func() error {
			_, err := cdp.Call(ctx, t.target, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
				Width: t.opts.ViewportWidth, Height: t.opts.ViewportHeight, DeviceScaleFactor: 1,
			})
			return err
		}},
		{"install the refusals of Google's renderer", func() error {
			_, err := cdp.Call(ctx, t.target, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: fmt.Sprintf(refusalsJS, t.refusalsKey()),
			})
			return err
		}},
		{"install the page-state script", func() error {
			_, err := cdp.Call(ctx, t.target, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: fmt.Sprintf(pageStateJS, t.stateKey),
			})
			return err
		}},
		{"install the write recorder", func() error { return t.installRecorder(ctx) }},
		// chromedp mirrors the DOM and tracks style sheets for its query
		// actions; the lane uses neither, so spare the CPU.
		{"disable CSS domain", func() error { _, err := cdp.Call(ctx, t.target, css.Disable, cdp.Empty{}); return err }},
		{"disable DOM domain", func() error { _, err := cdp.Call(ctx, t.target, dom.Disable, cdp.Empty{}); return err }},
	}
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i, s := range steps {
		wg.Go(func() {
			if err := s.call(); err != nil {
				errs[i] = fmt.Errorf("%s: %w", s.what, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// installRecorder installs the write recorder (causes.go) unless the
// causes are off: its binding first, which the recorder takes off the
// window before any page script runs, then its script.
func (t *tab) installRecorder(ctx context.Context) error {
	if t.opts.NoCauses {
		return nil
	}
	if _, err := cdp.Call(ctx, t.target, runtime.AddBinding, runtime.AddBindingParams{Name: t.bindingName}); err != nil {
		return err
	}
	_, err := cdp.Call(ctx, t.target, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: t.recorderSource(),
	})
	return err
}

// close stops the proxy, closes the target and disposes of the browser
// context (chromedp does both when its context is canceled). It is
// idempotent and bounded.
func (t *tab) close() {
	t.once.Do(func() {
		t.proxy.close()
		// Disposing of the browser context closes its pages at once, even
		// one whose script never yields; chromedp's own close would wait
		// for such a page first. Then chromedp forgets the target.
		disposed := false
		if t.browser != nil {
			ctx, cancel := context.WithTimeout(context.Background(), disposeTimeout)
			_, err := cdp.Call(ctx, t.browser, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: t.contextID})
			cancel()
			disposed = err == nil
			if err != nil {
				t.log.Debug("dispose of browser context", "err", err)
			}
		}
		// Bounded by chromedp's closeTargetTimeout (5 s). After a disposal
		// its detach and close find nothing left, which is fine.
		if err := chromedp.Cancel(t.ctx); err != nil && !disposed {
			t.log.Debug("close browser context", "err", err)
		}
	})
}
