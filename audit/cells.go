package audit

import (
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/width"
)

// The text report is laid out in terminal cells, not bytes or runes: East
// Asian wide and fullwidth characters take two cells, combining marks and
// other zero-width characters none.

// textWidth is the width of the text report in cells.
const textWidth = 80

// cells is the number of terminal cells s takes.
func cells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

// runeCells is the number of cells one rune takes.
func runeCells(r rune) int {
	switch {
	case r == 0:
		return 0
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) || r == '\u200b':
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// fit cuts s to at most w cells, ending a cut with "…", and pads it with
// spaces to exactly w cells, so table columns stay aligned.
func fit(s string, w int) string {
	s = shorten(s, w)
	return s + strings.Repeat(" ", max(0, w-cells(s)))
}

// shorten cuts s to at most w cells, ending a cut with "…".
func shorten(s string, w int) string {
	if cells(s) <= w {
		return s
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		c := runeCells(r)
		if used+c > w-1 {
			break
		}
		b.WriteRune(r)
		used += c
	}
	return b.String() + "…"
}

// wrap breaks s into lines of at most w cells, at spaces where it can and
// inside a word (a long URL) where it must.
func wrap(s string, w int) []string {
	if w < 8 {
		w = 8
	}
	var lines []string
	var line strings.Builder
	used := 0
	flush := func() {
		lines = append(lines, strings.TrimRight(line.String(), " "))
		line.Reset()
		used = 0
	}
	for _, word := range strings.Fields(s) {
		wc := cells(word)
		if used > 0 && used+1+wc > w {
			flush()
		}
		if used > 0 {
			line.WriteByte(' ')
			used++
		}
		for wc > w-used {
			// The word does not fit on a line of its own: break it.
			head, rest := splitCells(word, w-used)
			line.WriteString(head)
			flush()
			word, wc = rest, cells(rest)
		}
		line.WriteString(word)
		used += wc
	}
	if used > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

// splitCells splits s after at most n cells (at least one rune).
func splitCells(s string, n int) (string, string) {
	used := 0
	for i, r := range s {
		c := runeCells(r)
		if used+c > n && i > 0 {
			return s[:i], s[i:]
		}
		used += c
	}
	return s, ""
}

// secs is a count of seconds as a duration.
func secs(n int64) time.Duration { return time.Duration(n) * time.Second }
