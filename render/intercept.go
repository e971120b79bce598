package render

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
)

// handle runs the commands one queued event calls for.
func (a *audit) handle(ctx context.Context, item any) {
	switch e := item.(type) {
	case *fetch.EventRequestPaused:
		a.paused(ctx, e)
	case *page.EventJavascriptDialogOpening:
		// An unanswered dialog stalls the page and every later command.
		a.b.log.Debug("dismissing dialog", "type", e.Type, "url", e.URL)
		if _, err := cdp.Call(ctx, a.t.target, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false}); err != nil {
			a.b.log.Debug("dismiss dialog", "err", err)
		}
	case *page.EventWindowOpen:
		// Every way of opening a window (window.open, a link or form with
		// a target, with or without a gesture) ends here; the browser
		// creates none (--block-new-web-contents), so nothing loads.
		a.rec.block("", e.URL, ReasonPopup, "")
	case *target.EventTargetCreated:
		// A browser without --block-new-web-contents: the window was
		// counted when it was asked for; close it.
		if _, err := cdp.Call(ctx, a.t.browser, target.CloseTarget, target.CloseTargetParams{TargetID: e.TargetInfo.TargetID}); err != nil {
			a.b.log.Debug("close popup", "err", err)
		}
	}
}

// paused continues or fails one intercepted request.
func (a *audit) paused(ctx context.Context, e *fetch.EventRequestPaused) {
	reason, rule := a.decide(e)
	if reason == "" && e.ResourceType == network.ResourceTypeDocument && e.FrameID == a.mainFrame {
		a.followOrigin(ctx, e.Request.URL)
	}
	if reason == "" {
		if _, err := cdp.Call(ctx, a.t.target, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID}); err != nil {
			a.b.log.Debug("continue request", "url", e.Request.URL, "err", err)
		}
		return
	}
	if reason == reasonFavicon {
		a.rec.silence(e.NetworkID)
		a.net.uncount(e.NetworkID)
	} else {
		a.rec.block(e.NetworkID, e.Request.URL+e.Request.URLFragment, reason, rule)
	}
	if e.NetworkID != "" {
		a.net.forget(e.NetworkID)
	}
	// A refused document is aborted rather than blocked: Chromium then
	// keeps the current page instead of committing an error page.
	errReason := network.ErrorReasonBlockedByClient
	if e.ResourceType == network.ResourceTypeDocument {
		errReason = network.ErrorReasonAborted
		if e.FrameID == a.mainFrame {
			a.rec.mainBlocked(reason)
			a.refresh.refused.Store(true)
		}
	}
	if _, err := cdp.Call(ctx, a.t.target, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: errReason}); err != nil {
		a.b.log.Debug("fail request", "url", e.Request.URL, "err", err)
	}
}

// followOrigin moves the same-origin checks to the origin of an accepted
// main-frame document (after a redirect from http to https, say), so the
// subresources of the page actually shown are the ones asked about.
func (a *audit) followOrigin(ctx context.Context, raw string) {
	u, err := parseURL(raw)
	if err != nil || a.req.AllowSameOrigin == nil || origin(u) == a.pageOrigin() {
		return
	}
	o := origin(u)
	a.originMu.Lock()
	a.origin = o
	a.originMu.Unlock()
	if _, err := cdp.Call(ctx, a.t.target, fetch.Enable, fetch.EnableParams{Patterns: fetchPatterns(o)}); err != nil {
		a.b.log.Debug("re-enable request interception", "origin", o, "err", err)
	}
}

// decide returns why a paused request must not be made, or "".
func (a *audit) decide(e *fetch.EventRequestPaused) (reason, rule string) {
	u, err := parseURL(e.Request.URL)
	if err != nil {
		return ReasonNavigation, ""
	}
	if trackerURL(u) {
		return ReasonAnalytics, ""
	}
	if r, ok := blockedTypes[e.ResourceType]; ok {
		return r, ""
	}
	if !pausedMethodAllowed(e.Request) {
		// A form submission, which would also navigate: refused here, the
		// page stays as it is.
		return ReasonMethod, e.Request.Method
	}
	if e.ResourceType == network.ResourceTypeDocument {
		if reason := a.documentRequest(e, u); reason != "" {
			return reason, ""
		}
	}
	if favicon(e.ResourceType, e.Request.Headers) {
		return reasonFavicon, ""
	}
	if r := extensionReason(u); r != "" && (e.ResourceType != network.ResourceTypeDocument || e.FrameID != a.mainFrame) {
		// <object>, <embed> and <iframe> of an image or a video, whose
		// request type does not say what they fetch.
		return r, ""
	}
	if ok, rule := a.allowSameOrigin(u); !ok {
		return ReasonRobots, rule
	}
	return "", ""
}

// pausedMethodAllowed is allowedMethod for a paused request.
func pausedMethodAllowed(r *network.Request) bool {
	switch r.Method {
	case "GET", "HEAD":
		return !r.HasPostData
	case "OPTIONS":
		m := headerValue(r.Headers, "Access-Control-Request-Method")
		return (m == "GET" || m == "HEAD") && !r.HasPostData
	}
	return false
}

// documentRequest checks a document request: the main frame's (its
// navigations and hops, re-validated and capped) or another frame's (its
// loads per audit and its redirect hops capped).
func (a *audit) documentRequest(e *fetch.EventRequestPaused, u *url.URL) string {
	if e.FrameID == a.mainFrame {
		return a.mainFrameNavigation(u, e.RedirectedRequestID != "")
	}
	a.navMu.Lock()
	defer a.navMu.Unlock()
	if e.RedirectedRequestID != "" {
		a.frameHops[e.NetworkID]++
		if a.frameHops[e.NetworkID] > MaxRedirects {
			return ReasonRedirects
		}
		return ""
	}
	a.frameLoads++
	if a.frameLoads > MaxFrameLoads {
		return ReasonNavigation
	}
	return ""
}

// mainFrameNavigation counts and checks a main-frame document request: the
// first navigation, a later one (capped), or a redirect hop (capped). Each
// is re-validated with CheckURL.
func (a *audit) mainFrameNavigation(u *url.URL, redirect bool) string {
	a.navMu.Lock()
	defer a.navMu.Unlock()
	refuse := func(err error) string {
		a.navErr = err
		return ReasonNavigation
	}
	switch {
	case redirect:
		a.hops++
		if a.hops > MaxRedirects {
			return refuse(fmt.Errorf("%w: more than %d redirects", ErrNavigationFailed, MaxRedirects))
		}
		// Chromium would follow a loop up to its own cap of 20 hops,
		// asking the site for the same URL again each time.
		if slices.Contains(a.chain, u.String()) {
			return refuse(fmt.Errorf("%w: redirect loop: %s was already visited", ErrNavigationFailed, u.Redacted()))
		}
	case !a.navSeen:
		a.navSeen = true
		a.chain = a.chain[:0]
	default:
		a.navs++
		a.hops = 0
		a.chain = a.chain[:0]
		if a.navs > MaxNavigations {
			return refuse(fmt.Errorf("%w: more than %d navigations after the first", ErrNavigationFailed, MaxNavigations))
		}
	}
	a.chain = append(a.chain, u.String())
	if u.Scheme != "http" && u.Scheme != "https" {
		return refuse(fmt.Errorf("%w: %s: not http or https", ErrURLRefused, u.Redacted()))
	}
	if err := a.opts.CheckURL(u); err != nil {
		return refuse(fmt.Errorf("%w: %s: %w", ErrURLRefused, u.Redacted(), err))
	}
	if a.req.CheckNavigation != nil {
		if err := a.req.CheckNavigation(u); err != nil {
			return refuse(fmt.Errorf("%w: %s: %w", ErrURLRefused, u.Redacted(), err))
		}
	}
	a.navErr = nil
	return ""
}

// committedElsewhere counts a main-frame navigation that made no request
// (a blob:, about: or data: document) against the navigation cap; past the
// cap, the render stops waiting for the page to settle.
func (a *audit) committedElsewhere(raw string) {
	a.navMu.Lock()
	defer a.navMu.Unlock()
	if !a.navSeen {
		return
	}
	a.navs++
	if a.navs > MaxNavigations {
		a.rec.block("", raw, ReasonNavigation, "")
		a.endSettle()
	}
}

// navigations is how many main-frame navigations after the first were let through.
func (a *audit) navigations() int {
	a.navMu.Lock()
	defer a.navMu.Unlock()
	return min(a.navs, MaxNavigations)
}

// reasonFavicon refuses the favicon the browser fetches by itself, after the
// page loaded: not one of the page's requests, so neither counted nor listed
// (its timing would make every report's counts a race).
const reasonFavicon = "favicon"

// favicon reports whether a request is the browser's own favicon fetch.
func favicon(t network.ResourceType, h network.Headers) bool {
	return t == network.ResourceTypeOther && wantsImage(h)
}

// wantsImage reports whether the request's Accept header asks for an image.
func wantsImage(h network.Headers) bool {
	return strings.HasPrefix(strings.TrimSpace(headerValue(h, "Accept")), "image/")
}

// parseURL parses an absolute URL the browser reported.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if !u.IsAbs() {
		return nil, fmt.Errorf("%q is not absolute", raw)
	}
	return u, nil
}
