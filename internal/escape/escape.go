// Package escape writes the characters of untrusted text that act instead
// of showing — control characters and bidirectional formatting characters
// — as visible escapes, with one rule for every output: the text report in
// a terminal (package audit), the HTML pages (package server) and the JSON
// of the API, of `lekta audit --json` and of stored reports.
//
// A terminal obeys them: ESC sequences retitle or recolour it, BEL rings,
// a carriage return overwrites the line, C1 controls such as U+009B start
// sequences of their own, and bidi controls reorder what follows (a file
// name that reads "exe.png" may end in .exe). A browser shows a page's
// text, but the same bytes reach a terminal through curl or a log.
package escape

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Control reports whether r is escaped: a C0 control (U+0000–U+001F), DEL,
// a C1 control (U+0080–U+009F), or a bidirectional formatting character
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). These are
// Unicode's Cc category and its Bidi_Control property.
func Control(r rune) bool {
	switch {
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return true
	case r < 0x61c:
		return false
	}
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Text returns s with every Control written as a visible Go-style escape
// (\n, \r, \t, \x1b, \x85, \u202e) and invalid UTF-8 as U+FFFD; printable
// text, backslashes included, is kept as it is.
func Text(s string) string {
	if clean(s, nil) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	write(&b, s, nil)
	return b.String()
}

// Page returns an HTML page with every Control written as Text writes it,
// but the tab, the newline and the carriage return of a CRLF: markup and
// form fields need them (a browser submits a textarea's line breaks as
// CRLF), and in a terminal they only move to a tab stop or a new line.
// html/template escapes controls in URLs, scripts and styles itself; in
// text and attribute values it writes them raw, and Page escapes them.
func Page(b []byte) []byte {
	s := string(b)
	if clean(s, pageKeeps) {
		return b
	}
	var out strings.Builder
	out.Grow(len(s) + 64)
	write(&out, s, pageKeeps)
	return []byte(out.String())
}

// pageKeeps reports the controls Page writes raw: r at s[i:].
func pageKeeps(s string, i int, r rune) bool {
	return r == '\n' || r == '\t' || (r == '\r' && strings.HasPrefix(s[i+1:], "\n"))
}

// clean reports whether s is valid UTF-8 with no Control that keep does
// not keep.
func clean(s string, keep func(s string, i int, r rune) bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (Control(r) && (keep == nil || !keep(s, i, r))) {
			return false
		}
		i += n - 1
	}
	return true
}

// write appends s to b with every Control but those keep keeps escaped.
func write(b *strings.Builder, s string, keep func(s string, i int, r rune) bool) {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteRune(utf8.RuneError)
		case !Control(r) || (keep != nil && keep(s, i, r)):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0xa0:
			fmt.Fprintf(b, `\x%02x`, r)
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
}
