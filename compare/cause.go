package compare

import "time"

// CauseKind names what made a difference between the lanes.
type CauseKind string

// The kinds of cause a finding can carry.
const (
	// CauseScript: a script in the rendered page wrote the field.
	CauseScript CauseKind = "script"
	// CauseRequest: a script inserted the content after a fetch or XHR
	// response arrived; RequestPath names the response.
	CauseRequest CauseKind = "request"
	// CauseParser: the HTML parser moved a tag out of <head>; Element and
	// SourceLine name the token that ended the head.
	CauseParser CauseKind = "parser"
	// CauseSoft404: the page says it was not found though it answered 200.
	CauseSoft404 CauseKind = "soft_404"
	// CauseRedirect: the browser ended on another URL because a script, the
	// history API or a meta refresh moved it.
	CauseRedirect CauseKind = "redirect"
)

// Cause is why a finding's difference exists, when the audit could tell.
// Every field is optional; URLs and paths come from the page and are
// escaped wherever they are shown.
type Cause struct {
	Kind CauseKind `json:"kind"`
	// ScriptURL is the URL of the script that made the last write, or the
	// page's own URL for an inline script (Inline then says so).
	ScriptURL string `json:"script_url,omitempty"`
	// Inline: the writer is an inline script of the page; Line is then a
	// line of the page's HTML.
	Inline bool `json:"inline,omitempty"`
	// Line and Column locate the call (1-based) in ScriptURL.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// PageTimeMS is the page time of the write in milliseconds, nil when
	// unknown.
	PageTimeMS *int64 `json:"page_time_ms,omitempty"`
	// EarlierWriters counts the other scripts that wrote the field before
	// the last writer.
	EarlierWriters int `json:"earlier_writers,omitempty"`
	// Share is the writer's share (0..1) of the render-only words or links,
	// for text and link findings.
	Share float64 `json:"share,omitempty"`
	// RequestPath is the path of the fetch/XHR response whose content the
	// script inserted (never its body).
	RequestPath string `json:"request_path,omitempty"`
	// Element is the tag that ended the head early (parser) or the tag
	// written in the wrong place.
	Element string `json:"element,omitempty"`
	// SourceLine is the line of the server HTML the parser cause is on.
	SourceLine int `json:"source_line,omitempty"`
	// Mechanism is how a redirect happened: "script", "history" or
	// "meta_refresh"; for soft_404, which lane says not found ("plain",
	// "render" or "both").
	Mechanism string `json:"mechanism,omitempty"`
	// Target is where a redirect went.
	Target string `json:"target,omitempty"`
	// BlockedScripts counts scripts the render lane did not run (tracker
	// list, robots.txt, budget) that might have changed the field too.
	BlockedScripts int `json:"blocked_scripts,omitempty"`
}

// pageTimeMS turns a page time into the Cause field.
func pageTimeMS(d time.Duration) *int64 {
	ms := d.Milliseconds()
	return &ms
}

// ScriptWrite is one write a script made to a field the report compares, as
// the render lane's document-start recorder saw it.
type ScriptWrite struct {
	// Script is the URL of the calling script; the page URL when Inline.
	Script string
	Inline bool
	Line   int
	Column int
	// PageTime is when the write happened, in page time.
	PageTime time.Duration
	// Earlier counts other scripts that wrote the same element or field
	// before this write.
	Earlier int
	// Request is the path of the fetch/XHR response the same script had
	// received before this write, when there was one.
	Request string
	// RequestBy is the URL of the script that made that request.
	RequestBy string
	// Unknown: the page defeated the recorder (overwrote a wrapped
	// function, a hostile stack); Script is then "".
	Unknown bool
	// Stack is the write's call stack, innermost first: the frames with a
	// script URL (Script, Line and Column are its first).
	Stack []Frame
}

// Frame is one frame of a recorded stack: a script URL and a 1-based line
// and column in it.
type Frame struct {
	Script       string
	Line, Column int
}

// The mechanisms of a ClientRedirect.
const (
	RedirectScript      = "script"
	RedirectHistory     = "history"
	RedirectMetaRefresh = "meta_refresh"
)

// ClientRedirect is a navigation the browser made on the page's behalf.
type ClientRedirect struct {
	// Mechanism is "script" (a location assignment), "history" (pushState
	// or replaceState to another path) or "meta_refresh".
	Mechanism string
	From, To  string
	// PageTime is when it fired, in page time.
	PageTime time.Duration
}
