package policy

import "strings"

// Robots.txt decides on the request target as the lanes send it
// (RequestTarget): the RFC 9309 reading compares it normalised
// (normalisePathQuery), Google's reading compares its bytes as Google's
// matcher does. One request has many spellings that Chromium sends alike:
// "/a|b" and "/a%7Cb" are both sent as "/a%7Cb", and Google's matcher
// given the first would match a rule "/a|b" that the second does not. So
// Google's reading is asked about the target and about its raw spelling
// too (rawSpelling), and the answer depends on the request alone, never on
// how its URL was written, and is never less strict than Google's on any
// spelling of it.

// rawSpelling is target with the escapes of every ASCII byte Chromium
// escapes itself decoded (in the path the controls, space, DEL and
// "<>`{}^|, in the query the controls, space, DEL and "'<>): the spelling
// of the same request with those bytes written raw. Escapes of other bytes
// stay as they are.
func rawSpelling(target string) string {
	if !strings.Contains(target, "%") {
		return target
	}
	var b strings.Builder
	b.Grow(len(target))
	inQuery := false
	for i := 0; i < len(target); i++ {
		c := target[i]
		if c == '?' {
			inQuery = true
		}
		if v, ok := hexByte(target, i); ok && escapedByChromium(v, inQuery) {
			b.WriteByte(v)
			i += 2
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
