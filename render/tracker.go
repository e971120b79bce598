package render

import (
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"

	"lekta.dev/lekta/compare"
)

// netTracker follows the page's requests (what is in flight, for the
// completeness rule and the report) and keeps what the main document's
// responses said.
type netTracker struct {
	mu       sync.Mutex
	open     map[network.RequestID]reqInfo
	gone     map[network.RequestID]bool // blocked: their end may never be reported
	requests int
	loaded   bool
	streams  map[network.RequestID]*stream
	// socketClosed is set when a WebSocket closed (takeSocketClosed).
	socketClosed bool
	// counted and uncounted keep the browser's own requests out of requests.
	counted, uncounted map[network.RequestID]bool
	// changed wakes a wait for a stream's first message.
	changed chan struct{}

	// docIDs are the request ids of every main-frame document.
	docIDs map[network.RequestID]bool

	// main document of the current main-frame navigation
	mainReqID network.RequestID
	mainReq   string // URL of its latest hop
	mainResp  *network.Response
	redirects []compare.Redirect
	docURL    string // the committed main-frame URL
}

type reqInfo struct {
	url    string
	typ    network.ResourceType
	loader cdp.LoaderID
}

// maxGone bounds the set of request ids that must not count again.
const maxGone = 10000

func (n *netTracker) init() {
	n.open = make(map[network.RequestID]reqInfo)
	n.gone = make(map[network.RequestID]bool)
	n.changed = make(chan struct{}, 1)
	n.counted = make(map[network.RequestID]bool)
	n.uncounted = make(map[network.RequestID]bool)
	n.docIDs = make(map[network.RequestID]bool)
}

// longLived are request types that stay open by design and never hold up
// settling.
func longLived(t network.ResourceType) bool {
	return t == network.ResourceTypeWebSocket || t == network.ResourceTypeEventSource
}

// started records Network.requestWillBeSent.
func (n *netTracker) started(e *network.EventRequestWillBeSent, mainFrame cdp.FrameID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.uncounted[e.RequestID] {
		return // the browser's, not the page's (see reasonFavicon)
	}
	if browserOwn(e) {
		// Its paused request may be refused only after the report was
		// taken: decided here, the count is not a race.
		if len(n.uncounted) < maxGone {
			n.uncounted[e.RequestID] = true
		}
		return
	}
	if e.RedirectResponse == nil {
		n.requests++
		n.counted[e.RequestID] = true
	}
	if e.Type == network.ResourceTypeDocument && e.FrameID == mainFrame {
		if e.RedirectResponse != nil && e.RequestID == n.mainReqID {
			r := e.RedirectResponse
			n.redirects = append(n.redirects, compare.Redirect{URL: r.URL, Status: int(r.Status), Location: headerValue(r.Headers, "Location")})
		} else {
			n.redirects = nil
			n.mainResp = nil
		}
		n.mainReqID = e.RequestID
		n.mainReq = e.Request.URL
		if len(n.docIDs) < maxGone {
			n.docIDs[e.RequestID] = true
		}
	}
	// Long-lived connections never hold settling up, and neither do
	// worker requests (no loader): their completion is reported to the
	// worker's own session, not the page's.
	if longLived(e.Type) || e.LoaderID == "" || n.gone[e.RequestID] {
		return
	}
	n.open[e.RequestID] = reqInfo{url: e.Request.URL, typ: e.Type, loader: e.LoaderID}
}

// browserOwn reports whether a request is the browser's own (its favicon
// fetch): of type Other with no initiator in the page. Every request a page
// makes, prefetches included, names the parser, a script or a preload.
func browserOwn(e *network.EventRequestWillBeSent) bool {
	return e.Type == network.ResourceTypeOther && e.Initiator != nil &&
		e.Initiator.Type == network.InitiatorTypeOther && e.Initiator.Stack == nil && e.Initiator.URL == ""
}

// response records Network.responseReceived of the main document.
func (n *netTracker) response(e *network.EventResponseReceived) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e.RequestID == n.mainReqID {
		n.mainResp = e.Response
	}
}

// finished records loadingFinished or loadingFailed and returns what the
// request was.
func (n *netTracker) finished(id network.RequestID) (reqInfo, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	info, ok := n.open[id]
	if ok {
		delete(n.open, id)
	}
	return info, ok
}

// inFlight reports whether one of the page's requests is in flight
// (long-lived ones and workers' aside).
func (n *netTracker) inFlight() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.open) > 0
}

// uncount takes the browser's own request id (its favicon) out of the
// page's request count, whether or not its start was seen yet.
func (n *netTracker) uncount(id network.RequestID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.counted[id] {
		n.requests--
		delete(n.counted, id)
	}
	if len(n.uncounted) < maxGone {
		n.uncounted[id] = true
	}
	delete(n.open, id)
}

// forget stops waiting for a request the lane blocked: Chromium does not
// always report the end of a request it never made.
func (n *netTracker) forget(id network.RequestID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.gone) < maxGone {
		n.gone[id] = true
	}
	if _, ok := n.open[id]; ok {
		delete(n.open, id)
	}
}

// setLoaded records the main frame's load state.
func (n *netTracker) setLoaded(v bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.loaded = v
}

// navigated records a committed main-frame navigation. Requests of the
// documents before it are gone with them, whether or not their end is
// reported.
func (n *netTracker) navigated(u string, loader cdp.LoaderID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.docURL = u
	for id, r := range n.open {
		if r.loader != loader {
			delete(n.open, id)
		}
	}
}

// quiet reports whether the main frame has loaded and none of the page's
// requests is in flight (EventSource and worker requests aside; a
// WebSocket is in flight until it closed).
func (n *netTracker) quiet() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.loaded && len(n.open) == 0 && !n.sockets()
}

// pending describes what holds settling up, for the log.
func (n *netTracker) pending() (loaded bool, urls []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, r := range n.open {
		if len(urls) == 10 {
			break
		}
		urls = append(urls, string(r.typ)+" "+r.url)
	}
	return n.loaded, urls
}

// refusedMain returns why the proxy refused the main document, if it did.
func (n *netTracker) refusedMain() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mainResp == nil {
		return ""
	}
	return headerValue(n.mainResp.Headers, refusedHeader)
}

// isDocument reports whether id is the request of a main-frame document.
func (n *netTracker) isDocument(id network.RequestID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.docIDs[id]
}

// documentURL is the committed main-frame URL.
func (n *netTracker) documentURL() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.docURL
}

// mainURL is the URL of the main document's latest request.
func (n *netTracker) mainURL() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mainReq
}

// main returns the main document's response, redirects and URL.
func (n *netTracker) main() (*network.Response, []compare.Redirect, string, int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mainResp, append([]compare.Redirect(nil), n.redirects...), n.docURL, n.requests
}
