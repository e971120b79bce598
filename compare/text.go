package compare

import (
	"strings"
	"unicode/utf8"
)

// clip returns s cut to at most max bytes at a rune boundary, with invalid
// UTF-8 replaced, and whether it was cut.
func clip(s string, max int) (string, bool) {
	cut := false
	if len(s) > max {
		i := max
		for i > 0 && i > max-utf8.UTFMax && !utf8.RuneStart(s[i]) {
			i--
		}
		s, cut = s[:i], true
	}
	return strings.ToValidUTF8(s, "\uFFFD"), cut
}

// isHTMLSpace reports whether c is ASCII whitespace as HTML defines it.
func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// collapse trims s and turns every run of whitespace into one space, as
// browsers do for document.title. Non-breaking spaces are kept.
func collapse(s string) string {
	if isCollapsed(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isHTMLSpace(c) || c == '\v' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// cleanText collapses whitespace and clips to max bytes, recording the field
// in t when cut.
func (t *truncation) cleanText(field, s string, max int) string {
	// Collapsing can only shrink s, but a huge s costs a full copy; clip a
	// generous prefix first so the work stays bounded.
	if len(s) > 4*max {
		s = s[:4*max]
		t.mark(field)
	}
	out, cut := clip(collapse(s), max)
	if cut {
		t.mark(field)
	}
	return out
}

// truncation collects the names of fields that hit a cap.
type truncation map[string]struct{}

func (t truncation) mark(field string) { t[field] = struct{}{} }

// isCollapsed reports whether collapse would return s unchanged: no
// leading, trailing or doubled spaces and no other whitespace.
func isCollapsed(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\t', '\n', '\f', '\r', '\v':
			return false
		case ' ':
			if s[i+1] == ' ' {
				return false
			}
		}
	}
	return true
}
