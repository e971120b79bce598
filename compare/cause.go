package compare

import "time"

// CauseKind names what made a difference between the lanes.
type CauseKind string

// The kinds of cause a finding can carry.
const (
	// CauseScript: a script in the rendered page wrote the field.
	CauseScript CauseKind = "script"
	// CauseRequest: the content came from a response the page requested
	// (JSON, an HTML fragment, text); RequestPath names the response and
	// ScriptURL the code that requested it.
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
	// Source is the original file, line and column of that call, read from
	// the script's source map (ScriptURL is then the bundle that ran).
	Source *SourcePos `json:"source,omitempty"`
	// Defined is the file and line of the site's own code that holds the
	// content (or names a redirect's target) when no frame of the site's
	// own code was on the stack: found by the content's words in the
	// site's own sources (the original files of its source maps, its own
	// scripts, the templates and inline scripts of the page's HTML).
	// Library is then the library that rendered it.
	Defined *SourcePos `json:"defined,omitempty"`
	// Library is the library (React, Vue, jQuery, "a vendor bundle") whose
	// code made the write or the request: the frames before the site's own
	// code named by ScriptURL, or, with no frame of the site's own on the
	// stack, the library ScriptURL belongs to.
	Library string `json:"library,omitempty"`
	// PageTimeMS is the page time of the write in milliseconds, nil when
	// unknown.
	PageTimeMS *int64 `json:"page_time_ms,omitempty"`
	// EarlierWriters counts the other scripts that wrote the field before
	// the last writer.
	EarlierWriters int `json:"earlier_writers,omitempty"`
	// Share is the writer's share (0..1) of the render-only words or links,
	// for text and link findings.
	Share float64 `json:"share,omitempty"`
	// RequestPath is the path of the response whose body holds the
	// content (JSON, an HTML fragment, text; never its body), and DataShare
	// the share (0..1) of the content it holds. ScriptURL then names the
	// code that requested it.
	RequestPath string  `json:"request_path,omitempty"`
	DataShare   float64 `json:"data_share,omitempty"`
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
	// Header is the response header that sent the page there (HX-Redirect,
	// Refresh); RequestPath is then its response's path.
	Header string `json:"header,omitempty"`
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
	// Unknown: the page defeated the recorder (overwrote a wrapped
	// function, a hostile stack); Script is then "".
	Unknown bool
	// Source is the original place of Script, Line and Column, from the
	// script's source map; Library the library whose frames came first
	// (compare.Origin); Own: Script is the site's own code. The render
	// lane sets Script, Line and Column to the frame Origin names.
	Source  *SourcePos
	Library string
	Own     bool
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
	// By is the code that made a script or history navigation, nil when
	// unknown.
	By *Origin
	// Header names the response header that told the page to go (htmx's
	// HX-Redirect, Refresh), and HeaderOf the path of its response.
	Header, HeaderOf string
	// Defined is the line of the site's own code that names the target,
	// when By names no frame of the site's own (Cause.Defined).
	Defined *SourcePos
}
