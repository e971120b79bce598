package compare

import (
	"net/url"
	"strings"
)

// SourcePos is a place in an original source file, read from the source
// map of the script that ran: the file as the map names it ("src/App.jsx"),
// a 1-based line and a 1-based column.
type SourcePos struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column,omitempty"`
}

// Origin is the code behind a write, a request or a navigation, as the
// render lane resolved its stack: the first frame that is the site's own
// code (not a library's, by the script's name or content or by its source
// map), its original place when the script has a source map, and the
// library whose frames came before it. With no frame of the site's own,
// Script is the first frame's and Library says whose it is.
type Origin struct {
	Script       string
	Inline       bool
	Line, Column int
	Source       *SourcePos
	Library      string
	// Own: Script (and Source) is the site's own code.
	Own bool
}

// DataResponse is a response the render lane received while it rendered
// (JSON, an HTML fragment, text), indexed for the audit only: the words
// and URLs its body holds, never the body, and never stored. Content only
// the rendered page has is attributed to the response that holds most of
// it (Cause.DataShare).
type DataResponse struct {
	// URL and Path are the response's; Path is what a report names.
	URL, Path string
	// By is the code that requested it, nil when unknown.
	By *Origin
	// base is URL parsed, which the URLs of the body are resolved against.
	base  *url.URL
	words map[uint64]struct{}
	links map[string]struct{}
	full  bool
}

// Limits of one DataResponse's index.
const (
	maxDataWords = 10_000
	maxDataLinks = 2_000
)

// NewDataResponse starts the index of a response.
func NewDataResponse(rawURL string) *DataResponse {
	d := &DataResponse{URL: rawURL, Path: rawURL, words: map[uint64]struct{}{}, links: map[string]struct{}{}}
	if u, err := url.Parse(rawURL); err == nil {
		d.base, d.Path = u, u.EscapedPath()
	}
	return d
}

// AddText indexes the words of a text value of the body, and the value as a
// URL when it reads as one.
func (d *DataResponse) AddText(s string) {
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "http:") || strings.HasPrefix(s, "https:") || strings.HasPrefix(s, "./") {
		d.AddURL(s)
	}
	var w wordCounter
	w.add(s)
	for k := range w.keys {
		if len(d.words) >= maxDataWords {
			d.full = true
			return
		}
		d.words[k] = struct{}{}
	}
}

// AddURL indexes a URL the body holds (an href of a fragment, a JSON
// value), resolved against the response's own URL as the extractor
// resolves a link's href, so the two spellings compare equal.
func (d *DataResponse) AddURL(s string) {
	if d.base == nil || len(d.links) >= maxDataLinks || len(s) > 2048 {
		return
	}
	if u, _ := resolveRef(d.base, s, true); u != "" {
		d.links[u] = struct{}{}
	}
}

// Empty reports whether the index holds nothing.
func (d *DataResponse) Empty() bool { return len(d.words) == 0 && len(d.links) == 0 }

// setOrigin names the code of o in c: the site's own frame with its line
// and original place, or, when every frame was a library's, the library
// and its script alone: a library's minified line is never the answer.
func (c *Cause) setOrigin(o *Origin) {
	c.ScriptURL, c.Inline, c.Library = o.Script, o.Inline, o.Library
	if o.Own {
		c.Line, c.Column, c.Source = o.Line, o.Column, o.Source
	}
}

// clientRedirectCause is the cause of a navigation the browser made for the
// page: its mechanism and target, and the code or response header that
// asked for it.
func clientRedirectCause(r ClientRedirect) *Cause {
	c := &Cause{Kind: CauseRedirect, Mechanism: r.Mechanism, Target: r.To, PageTimeMS: pageTimeMS(r.PageTime)}
	if r.By != nil {
		c.setOrigin(r.By)
	}
	if r.Header != "" {
		c.Header, c.RequestPath = r.Header, r.HeaderOf
	}
	if !c.ownCode() {
		c.Defined = r.Defined
	}
	return c
}
