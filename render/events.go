package render

import (
	"encoding/json"
	"fmt"
	"net/textproto"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"lekta.dev/lekta/compare"
)

// onEvent handles one event of the page target. It runs on chromedp's
// reader goroutine in arrival order, so it must be quick and send no
// command: anything that needs one is queued for the worker.
func (a *audit) onEvent(ev any) {
	if a.onNetwork(ev) || a.onFrame(ev) {
		return
	}
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			a.rec.console(formatArgs(e.Args))
		}
	case *runtime.EventBindingCalled:
		if e.Name == a.t.bindingName {
			select {
			case a.causesReply <- e.Payload:
			default:
			}
		}
	case *runtime.EventExceptionThrown:
		a.rec.exception(exceptionText(e.ExceptionDetails))
	case *log.EventEntryAdded:
		// The failure of a blocked request is the lane's doing, and the
		// main document's own error status is the status finding's.
		id := e.Entry.NetworkRequestID
		if e.Entry.Level == log.EntryLevelError && !a.rec.isBlocked(id) && !(id != "" && a.net.isDocument(id)) {
			a.rec.console(e.Entry.Text)
		}
	case *emulation.EventVirtualTimeBudgetExpired:
		select {
		case a.budgetExpired <- struct{}{}:
		default:
		}
	case *inspector.EventTargetCrashed:
		a.pageGone(ErrPageCrashed)
	case *inspector.EventDetached:
		a.pageGone(fmt.Errorf("%w: detached: %s", ErrPageCrashed, e.Reason))
	case *fetch.EventRequestPaused:
		if e.ResourceType == network.ResourceTypeDocument && e.FrameID == a.mainFrame {
			a.stages.mark(&a.stages.doc)
		}
		a.enqueue(e)
	case *page.EventJavascriptDialogOpening:
		a.enqueue(e)
	case *page.EventWindowOpen:
		a.enqueue(e)
	case *target.EventTargetCreated:
		ti := e.TargetInfo
		if ti.Type == "page" && ti.BrowserContextID == a.t.contextID && ti.TargetID != a.t.target.TargetID {
			a.enqueue(e)
		}
	}
}

// onNetwork handles the page's network events; it reports whether ev was one.
func (a *audit) onNetwork(ev any) bool {
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		a.net.started(e, a.mainFrame)
		if !a.opts.NoCauses {
			a.inits.note(e, string(a.mainFrame))
		}
		if e.Type == network.ResourceTypeEventSource {
			a.net.streamOpened(e.RequestID, true)
		}
	case *network.EventWebSocketCreated:
		a.net.streamOpened(e.RequestID, false)
	case *network.EventWebSocketFrameReceived:
		a.net.streamHeard(e.RequestID)
	case *network.EventEventSourceMessageReceived:
		a.net.streamHeard(e.RequestID)
	case *network.EventWebSocketClosed:
		a.net.streamClosed(e.RequestID)
	case *network.EventResponseReceived:
		a.net.response(e)
		if e.Type == network.ResourceTypeDocument && e.FrameID == a.mainFrame {
			a.refresh.document(headerValue(e.Response.Headers, "Refresh"))
		}
		if why := headerValue(e.Response.Headers, refusedHeader); why != "" {
			a.rec.failed(e.Response.URL, e.Type, "refused by proxy: "+why)
		}
	case *network.EventLoadingFinished:
		a.net.finished(e.RequestID)
		a.net.streamClosed(e.RequestID)
	case *network.EventLoadingFailed:
		a.net.streamClosed(e.RequestID)
		info, ok := a.net.finished(e.RequestID)
		if ok && !e.Canceled && !a.rec.isBlocked(e.RequestID) {
			a.rec.failed(info.url, e.Type, a.failReason(info.url, e.ErrorText))
		}
	default:
		return false
	}
	return true
}

// onFrame handles the main frame's navigation and load events; it reports
// whether ev was one.
func (a *audit) onFrame(ev any) bool {
	switch e := ev.(type) {
	case *page.EventFrameRequestedNavigation:
		a.clientNavigation(e)
	case *page.EventLoadEventFired:
		a.stages.mark(&a.stages.load)
		a.net.setLoaded(true)
		a.loadOnce.Do(func() { close(a.loadFired) })
	case *page.EventFrameStartedLoading:
		if e.FrameID == a.mainFrame {
			a.net.setLoaded(false)
		}
	case *page.EventFrameStoppedLoading:
		if e.FrameID == a.mainFrame {
			a.net.setLoaded(true)
		}
	case *page.EventFrameNavigated:
		if e.Frame.ParentID != "" {
			break
		}
		if u, err := parseURL(e.Frame.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			a.net.navigated(e.Frame.URL, e.Frame.LoaderID)
		} else {
			// blob:, about: and data: documents never pass Fetch: counted
			// here, and the final URL stays the last document fetched.
			a.committedElsewhere(e.Frame.URL)
		}
	default:
		return false
	}
	return true
}

// pageGone ends the render because the page went away: a crash, unless
// Close is stopping the browser.
func (a *audit) pageGone(err error) {
	select {
	case <-a.in.closing:
		a.cancel(ErrClosed)
	default:
		a.cancel(err)
	}
}

// failReason explains a failed request, with the guard's dial error when
// the proxy recorded one for its host.
func (a *audit) failReason(raw, errorText string) string {
	if u, err := parseURL(raw); err == nil && u.Host != "" {
		if derr := a.t.proxy.refusal(hostPort(u)); derr != nil {
			return errorText + ": " + derr.Error()
		}
	}
	return errorText
}

// recorder keeps what the render lane reports besides the DOM, bounded in
// size whatever the page does.
type recorder struct {
	mu          sync.Mutex
	blocked     map[string]int
	blockedURLs []compare.BlockedRequest
	blockedIDs  map[network.RequestID]bool
	consoleErrs []string
	exceptions  []string
	failures    []compare.FailedRequest
	mainReason  string // why the last refused main-frame document was refused
	// redirects are the navigations a script or a meta refresh asked for.
	redirects []compare.ClientRedirect
}

func (r *recorder) init() {
	r.blocked = make(map[string]int)
	r.blockedIDs = make(map[network.RequestID]bool)
}

// block records a refused request. id is its network request id, so the
// failure it causes is not reported as a failed request or console error.
func (r *recorder) block(id network.RequestID, u, reason, rule string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blocked[reason]++
	if id != "" && len(r.blockedIDs) < 10000 {
		r.blockedIDs[id] = true
	}
	if len(r.blockedURLs) < maxBlockedURLs {
		r.blockedURLs = append(r.blockedURLs, compare.BlockedRequest{URL: truncateURL(u), Reason: reason, Rule: rule})
	}
}

// silence keeps a refused request that is not the page's (the favicon) out
// of the failed requests and console errors.
func (r *recorder) silence(id network.RequestID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id != "" && len(r.blockedIDs) < 10000 {
		r.blockedIDs[id] = true
	}
}

// mainBlocked notes that a main-frame document was refused.
func (r *recorder) mainBlocked(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mainReason = reason
}

// blockedDocument is the reason the last main-frame document was refused.
func (r *recorder) blockedDocument() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mainReason
}

func (r *recorder) isBlocked(id network.RequestID) bool {
	if id == "" {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.blockedIDs[id]
}

func (r *recorder) console(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.consoleErrs) < maxMessages {
		r.consoleErrs = append(r.consoleErrs, clip(msg))
	}
}

func (r *recorder) exception(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.exceptions) < maxMessages {
		r.exceptions = append(r.exceptions, clip(msg))
	}
}

func (r *recorder) failed(u string, t network.ResourceType, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.failures) < maxMessages {
		r.failures = append(r.failures, compare.FailedRequest{URL: truncateURL(u), Type: string(t), Reason: clip(reason)})
	}
}

// clip shortens s to maxMessageLen bytes at a rune boundary.
func clip(s string) string {
	if len(s) <= maxMessageLen {
		return s
	}
	cut := maxMessageLen
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// formatArgs renders console.error arguments as text.
func formatArgs(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, o := range args {
		switch {
		case len(o.Value) > 0:
			var s string
			if json.Unmarshal(o.Value, &s) == nil {
				parts = append(parts, s)
			} else {
				parts = append(parts, string(o.Value))
			}
		case o.Description != "":
			parts = append(parts, o.Description)
		case o.UnserializableValue != "":
			parts = append(parts, string(o.UnserializableValue))
		default:
			parts = append(parts, string(o.Type))
		}
	}
	return strings.Join(parts, " ")
}

// exceptionText is the message of an uncaught exception.
func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return ""
	}
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

// headerValue returns a header of a CDP header map, case-insensitively.
func headerValue(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// toHeader converts CDP headers (several values joined by newlines) into
// compare.Header.
func toHeader(h network.Headers) compare.Header {
	out := make(compare.Header, len(h))
	for k, v := range h {
		s, ok := v.(string)
		if !ok {
			continue
		}
		key := textproto.CanonicalMIMEHeaderKey(k)
		out[key] = append(out[key], strings.Split(s, "\n")...)
	}
	return out
}
