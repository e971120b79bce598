package compare

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// CauseShow says how the page-controlled strings of a cause are shown.
// Each function makes its argument safe for the output it writes to (the
// text report escapes control characters; the report page leaves the
// escaping to html/template) and may shorten it.
type CauseShow struct {
	// Script shows a script URL.
	Script func(scriptURL string) string
	// Text shows the other strings from the page: a request path, a
	// redirect target, a tag name.
	Text func(s string) string
}

// CauseWords says a cause in one sentence without a capital or a full
// stop, for the text report, the report page and the change log:
// "caused by /app.js line 12, column 5, at 340 ms of page time (2 earlier
// scripts also wrote it)". It names no JSON value (soft_404 is "the page
// says it was not found").
func CauseWords(c *Cause, show CauseShow) string {
	if c == nil {
		return ""
	}
	var s string
	switch c.Kind {
	case CauseScript:
		s = "caused by " + scriptWords(c, show)
	case CauseRequest:
		s = "caused by " + requestWords(c, show)
	case CauseParser:
		s = "caused by " + parserWords(c, show)
	case CauseSoft404:
		s = "the page says it was not found" + soft404Lane(c.Mechanism)
	case CauseRedirect:
		s = "caused by " + redirectWords(c, show)
	default:
		s = "caused by something Lekta could not name"
	}
	if c.BlockedScripts > 0 {
		s += fmt.Sprintf("; %s might also have changed it", plural(c.BlockedScripts, "blocked script", "blocked scripts"))
	}
	return s
}

// CauseAgent names who made the difference in a few words, for a sentence
// that says a cause changed: "/js/app.js", "an inline script in the page",
// "/api/products", "an <iframe> in the server HTML".
func CauseAgent(c *Cause, show CauseShow) string {
	switch c.Kind {
	case CauseScript:
		if libraryOnly(c) {
			if c.Defined != nil {
				return show.Text(c.Defined.File)
			}
			return c.Library
		}
		if c.Source != nil && c.ScriptURL != "" {
			return show.Text(c.Source.File)
		}
		return writerName(c, show)
	case CauseRequest:
		if c.RequestPath == "" {
			return "a request of " + writerName(c, show)
		}
		return show.Text(c.RequestPath)
	case CauseParser:
		return elementName(c.Element, show) + " in the server HTML"
	case CauseSoft404:
		return "a not-found page" + soft404Lane(c.Mechanism)
	case CauseRedirect:
		return redirectName(c.Mechanism)
	}
	return "something Lekta could not name"
}

// writerName is the script that wrote: its URL as show writes it, or the
// page's inline script, or an unknown one.
func writerName(c *Cause, show CauseShow) string {
	switch {
	case c.Inline:
		return "an inline script in the page"
	case c.ScriptURL == "":
		return "a script that could not be identified"
	}
	return show.Script(c.ScriptURL)
}

// libraryOnly reports whether a cause names no frame of the site's own
// code: every frame on the stack was a library's.
func libraryOnly(c *Cause) bool {
	return c.Library != "" && c.Source == nil && c.Line == 0 && !c.Inline && c.ScriptURL != ""
}

// originWords names the code of a cause: the site's own file and line (the
// original file of a source map, with the script that ran), the library
// whose code called it, or the library alone when no frame was the site's.
func originWords(c *Cause, show CauseShow) string {
	if libraryOnly(c) {
		s := c.Library + " (" + show.Script(c.ScriptURL) + ")"
		if c.Defined != nil {
			s += " from the site's own code at " + show.Text(c.Defined.File) + fmt.Sprintf(" line %d", c.Defined.Line)
		}
		return s
	}
	s := writerName(c, show)
	switch {
	case c.Inline && c.Line > 0:
		s += fmt.Sprintf(", line %d", c.Line)
	case c.Source != nil && c.ScriptURL != "":
		s = show.Text(c.Source.File) + fmt.Sprintf(" line %d", c.Source.Line)
		if c.Source.Column > 0 {
			s += fmt.Sprintf(", column %d", c.Source.Column)
		}
		s += " (in " + show.Script(c.ScriptURL) + ")"
	case c.Line > 0 && c.ScriptURL != "":
		s += fmt.Sprintf(" line %d", c.Line)
		if c.Column > 0 {
			s += fmt.Sprintf(", column %d", c.Column)
		}
	}
	if c.Library != "" {
		s += ", called through " + c.Library
	}
	return s
}

func scriptWords(c *Cause, show CauseShow) string {
	s := originWords(c, show)
	if c.PageTimeMS != nil {
		s += ", at " + Millis(*c.PageTimeMS) + " of page time"
	}
	switch {
	case libraryOnly(c) && c.Defined != nil:
		s += " (found by its words: every frame on the stack was " + c.Library + "'s)"
	case libraryOnly(c):
		s += ", with no frame of the site's own code on the stack"
	}
	var notes []string
	if c.Share > 0 {
		notes = append(notes, Percent(c.Share)+" of it came from this script")
	}
	if c.EarlierWriters > 0 {
		notes = append(notes, plural(c.EarlierWriters, "earlier script", "earlier scripts")+" also wrote it")
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

// requestWords: "/api/products.json (which holds 92% of it), fetched by
// src/pages.jsx line 36 (in /assets/main.js); rendered by React".
func requestWords(c *Cause, show CauseShow) string {
	s := "a request"
	if c.RequestPath != "" {
		s = show.Text(c.RequestPath)
	}
	if c.DataShare > 0 {
		s += " (which holds " + Percent(c.DataShare) + " of it)"
	}
	by := *c
	lib := ""
	if !libraryOnly(c) {
		lib, by.Library = c.Library, ""
	}
	s += ", fetched by " + originWords(&by, show)
	if lib != "" {
		s += "; rendered by " + lib
	}
	return s
}

func parserWords(c *Cause, show CauseShow) string {
	s := elementName(c.Element, show)
	if c.SourceLine > 0 {
		return s + fmt.Sprintf(" on line %d of the server HTML", c.SourceLine)
	}
	return s + " in the server HTML"
}

// elementName is "an <iframe>", "a <div>", or "a tag" when unknown.
func elementName(element string, show CauseShow) string {
	e := strings.Trim(strings.TrimSpace(element), "<>/")
	switch e {
	case "":
		return "a tag"
	case "text":
		// The parser cause's name for stray characters in the head.
		return "stray text"
	}
	article := "a"
	if strings.ContainsRune("aeiouAEIOU", []rune(e)[0]) {
		article = "an"
	}
	return article + " <" + show.Text(e) + ">"
}

// soft404Lane says which page says not found, from Cause.Mechanism.
func soft404Lane(lane string) string {
	switch lane {
	case string(LanePlain):
		return " (server HTML)"
	case string(LaneRender):
		return " (rendered page)"
	case "both":
		return " (server HTML and rendered page)"
	}
	return ""
}

// redirectName says a redirect's mechanism in words.
func redirectName(mechanism string) string {
	switch mechanism {
	case RedirectScript:
		return "a script redirect"
	case RedirectHistory:
		return "a script that rewrote the address (history API)"
	case RedirectMetaRefresh:
		return "a meta refresh"
	}
	return "a redirect in the browser"
}

func redirectWords(c *Cause, show CauseShow) string {
	s := redirectName(c.Mechanism)
	if c.Target != "" {
		s += " to " + show.Text(c.Target)
	}
	if c.PageTimeMS != nil {
		s += " after " + Millis(*c.PageTimeMS) + " of page time"
	}
	switch {
	case c.Header != "" && c.RequestPath != "":
		s += ", as the " + show.Text(c.Header) + " header of " + show.Text(c.RequestPath) + " told it"
	case c.Header != "":
		s += ", as a " + show.Text(c.Header) + " response header told it"
	}
	switch {
	case c.ScriptURL != "" || c.Inline:
		s += ", by " + originWords(c, show)
	case c.Defined != nil:
		s += ", as the site's own code at " + show.Text(c.Defined.File) + fmt.Sprintf(" line %d", c.Defined.Line) + " says"
	}
	return s
}

// ScriptLabel is a script URL as a report line shows it: the path alone
// for a script of the page's own host, host and path for another host's
// (a tag manager's host is the answer), without the query; longer than
// width characters, it keeps the start of the path and the file name with
// "…" between them: "/static/…/app.3f9c.js". A string that is not a URL
// is shortened the same way.
func ScriptLabel(scriptURL, pageURL string, width int) string {
	s := scriptURL
	if u, err := url.Parse(scriptURL); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		s = u.EscapedPath()
		if s == "" {
			s = "/"
		}
		if p, err := url.Parse(pageURL); err != nil || !strings.EqualFold(p.Host, u.Host) {
			s = u.Host + s
		}
	}
	return MiddleCut(s, width)
}

// MiddleCut shortens s to width runes by cutting it in the middle: it
// keeps the last path segment whole when it can and the start up to a
// "/", with "…" between them.
func MiddleCut(s string, width int) string {
	if utf8.RuneCountInString(s) <= width || width < 8 {
		return s
	}
	r := []rune(s)
	tail, whole := r[len(r)-width/2:], false
	if i := strings.LastIndexByte(s, '/'); i > 0 {
		if t := []rune(s[i:]); len(t) < width-4 {
			tail, whole = t, true
		}
	}
	head := r[:width-1-len(tail)]
	if i := strings.LastIndexByte(string(head), '/'); i > 0 && whole {
		head = []rune(string(head)[:i+1])
	}
	return string(head) + "…" + string(tail)
}
