package compare

import (
	"net/textproto"
	"time"
)

// Lane names one of the two ways a page is fetched.
type Lane string

// The two lanes of an audit.
const (
	// LanePlain is one HTTP GET without JavaScript: what AI crawlers receive.
	LanePlain Lane = "plain"
	// LaneRender is a headless-Chromium render: what a browser sees.
	LaneRender Lane = "render"
)

// Header holds response headers with canonical MIME keys, as in net/http,
// without importing it.
type Header map[string][]string

// Get returns the first value of key, or "".
func (h Header) Get(key string) string {
	v := h[textproto.CanonicalMIMEHeaderKey(key)]
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// Values returns every value of key.
func (h Header) Values(key string) []string {
	return h[textproto.CanonicalMIMEHeaderKey(key)]
}

// Redirect is one hop of a redirect chain.
type Redirect struct {
	URL      string `json:"url"`
	Status   int    `json:"status"`
	Location string `json:"location"`
}

// Timings are the durations a lane measured.
type Timings struct {
	// TTFB is the time from sending the request to the first response byte.
	TTFB time.Duration
	// Total is the whole lane, redirects and body included.
	Total time.Duration
}

// FailedRequest is a subresource request of the render lane that failed.
type FailedRequest struct {
	URL    string `json:"url"`
	Type   string `json:"type,omitempty"`
	Reason string `json:"reason"`
}

// Clock is the time the response was sent, by which its unavailable_after
// dates are judged: its Date header, else FetchedAt; zero when neither is
// known.
func (s *Snapshot) Clock() time.Time {
	if s == nil {
		return time.Time{}
	}
	if t := responseDate(s.Header); !t.IsZero() {
		return t
	}
	return s.FetchedAt
}

// RenderDetails is what only the render lane knows.
type RenderDetails struct {
	// Blocked counts requests the lane refused to make, by reason
	// (image, media, font, analytics, robots, ...).
	Blocked map[string]int
	// BlockedURLs lists some of the blocked URLs with their reason, for findings.
	BlockedURLs []BlockedRequest
	// ConsoleErrors are console.error messages and failed-resource messages.
	ConsoleErrors []string
	// Exceptions are uncaught JavaScript exceptions.
	Exceptions []string
	// FailedRequests are subresources that failed to load.
	FailedRequests []FailedRequest
	// Requests is the number of requests the page made (blocked ones included).
	Requests int
	// Navigations counts main-frame navigations after the first.
	Navigations int
	// Settled is false when the page did not finish before the lane's cap.
	Settled bool
	// SettledBy says why the render stopped waiting: "idle" (the page had
	// no more work), "budget" (it was still working when its budget of
	// page time ran out), "deadline" (the wall-clock cap came first) or
	// "request_budget" (it used up the audit's request budget).
	SettledBy string
	// PageTime is how much page time the page used: its last activity or
	// the end of its load event, in page (virtual) time.
	PageTime time.Duration
	// Budget is the page time the lane granted the page.
	Budget time.Duration
	// PendingRequests lists requests still in flight when the cap hit.
	PendingRequests []string
	// CookiesRefused counts the cookies the page tried to keep or send
	// (Set-Cookie headers and Cookie headers the lane dropped).
	CookiesRefused int
	// CredentialsRefused counts the credentials the page tried to send and
	// the authentication challenges it got (the lane answers none).
	CredentialsRefused int
	// RefusedFeatures lists the features Google's renderer lacks that the
	// page tried and the lane refused: "indexeddb", "websql",
	// "service_worker", "webgl", "permissions".
	RefusedFeatures []string
	// ListenerMark is the name of an attribute the lane set, before taking
	// the DOM snapshot, on the <a> elements without a followable href that
	// Chromium lists event listeners for (a click handler added with
	// addEventListener leaves no trace in the markup). It is new for every
	// render, so a page cannot forge it; "" when the lane marked nothing.
	ListenerMark string
	// WriteMark is the name of an attribute the lane set, before taking the
	// DOM snapshot, on elements a script wrote or inserted; its value is an
	// index into Writes. Fresh for every render; "" when nothing was marked.
	WriteMark string
	// Writes are the script writes the document-start recorder saw, in
	// order; element marks and Fields point into it.
	Writes []ScriptWrite
	// FieldWrites maps a head field ("title", "lang") that is not an
	// element the mark can sit on to its last write, an index into Writes.
	FieldWrites map[string]int
	// WritesTampered: the page replaced functions the recorder wraps, so
	// a field no write was recorded for may still have been written by a
	// script; its cause is then unknown rather than absent.
	WritesTampered bool
	// Data are the responses the render received that the audit indexed
	// for the causes (JSON, HTML fragments, text): never stored.
	Data []*DataResponse `json:"-"`
	// Code are the files of the site's own code the audit indexed, for
	// content no frame of the site's own code wrote: never stored.
	Code []*CodeSource `json:"-"`
	// SourceMaps counts the source maps the lane fetched for the causes.
	SourceMaps int
	// ClientRedirects are the navigations scripts, the history API or a
	// meta refresh made after the document loaded.
	ClientRedirects []ClientRedirect
	// Timing is where the render's wall time went.
	Timing RenderTiming
}

// RenderTiming is where one render's wall time went. Context, Navigate,
// Settle and Snapshot follow one another and add up to nearly all of the
// render; DocumentRequest and Load are points of the navigation, measured
// from its start (zero when they did not happen: a failed request, a page
// whose load event never came).
type RenderTiming struct {
	// Context is the wait for a prepared browser context.
	Context time.Duration
	// Navigate is from asking Chromium to load the page until the main
	// document's response committed (request interception set up, the
	// request made and answered).
	Navigate time.Duration
	// DocumentRequest is from the navigation's start until Chromium asked
	// for the main document (the lane's interception saw it).
	DocumentRequest time.Duration
	// Load is from the navigation's start until the page's first load event.
	Load time.Duration
	// Settle is the wait for the page to finish its work (the completeness
	// rule), after the navigation.
	Settle time.Duration
	// Snapshot is reading the DOM and what the lane recorded.
	Snapshot time.Duration
}

// BlockedRequest is one request the render lane refused, and why.
type BlockedRequest struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
	// Rule is the robots.txt rule that disallowed it, when Reason is "robots".
	Rule string `json:"rule,omitempty"`
}

// Snapshot is what a lane hands to the extractor: one fetched document and
// how it was fetched. Body is UTF-8 HTML; it lives only for the audit.
type Snapshot struct {
	Lane         Lane
	RequestedURL string
	FinalURL     string
	// Status is the HTTP status of the final response (0 when none arrived).
	Status int
	Header Header
	// ContentType is the media type of the final response, lower-case, no parameters.
	ContentType string
	// Body is the document as UTF-8 (decoded from its charset).
	Body []byte
	// Bytes is the number of decoded body bytes read (before any truncation note).
	Bytes int64
	// Truncated is true when the body hit the lane's size cap.
	Truncated bool
	// Charset is the charset the body was decoded from.
	Charset   string
	Redirects []Redirect
	Timings   Timings
	// FetchedAt is when the lane received the final response, by the
	// lane's clock: the time unavailable_after dates are judged by when the
	// response has no Date header. Zero when unknown.
	FetchedAt time.Time
	UserAgent string
	// Render is set by the render lane only.
	Render *RenderDetails
}

// responseDate is a response's Date header, zero when absent or
// unparsable. HTTP dates come in three forms (RFC 9110 §5.6.7).
func responseDate(h Header) time.Time {
	v := h.Get("Date")
	if v == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC1123, time.RFC850, time.ANSIC} {
		if t, err := time.Parse(layout, v); err == nil {
			return t
		}
	}
	return time.Time{}
}
