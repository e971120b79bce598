package audit

import (
	"io"
	"strings"
	"unicode/utf8"

	"lekta.dev/lekta/internal/escape"
)

// Page data reaches the text report (titles, headings, console messages,
// URLs, robots rules), and a terminal obeys the control characters in what
// it prints: ESC sequences retitle or recolour it, BEL rings, carriage
// returns overwrite lines, bidi controls reorder what follows. cleanText
// escapes all of them visibly; safeWriter is the backstop under the whole
// text report.

// cleanText returns s with every C0 and C1 control, DEL and bidirectional
// formatting character written as a visible escape (\x1b, \n, \u202e),
// invalid UTF-8 as U+FFFD, and printable Unicode kept: escape.Text, whose
// rules the report pages and the JSON outputs share.
func cleanText(s string) string {
	return escape.Text(s)
}

// safeWriter escapes every control character but the newline on its way to
// the terminal, whatever wrote it.
type safeWriter struct {
	w io.Writer
	// pending holds the start of a UTF-8 sequence cut by the last Write.
	pending []byte
}

func (s *safeWriter) Write(p []byte) (int, error) {
	buf := append(s.pending, p...)
	s.pending = nil
	if n := incompleteTail(buf); n > 0 {
		s.pending = append([]byte(nil), buf[len(buf)-n:]...)
		buf = buf[:len(buf)-n]
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(string(buf), "\n") {
		body, nl := strings.CutSuffix(line, "\n")
		out.WriteString(cleanText(body))
		if nl {
			out.WriteByte('\n')
		}
	}
	if _, err := io.WriteString(s.w, out.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// incompleteTail is the length of a UTF-8 sequence cut off at the end of b.
func incompleteTail(b []byte) int {
	for n := 1; n <= 3 && n <= len(b); n++ {
		c := b[len(b)-n]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-n:]) {
				return n
			}
			return 0
		}
	}
	return 0
}
