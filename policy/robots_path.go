package policy

import (
	"net/url"
	"strings"
)

// RequestPath is the path and query of u as robots.txt rules see them
// ("/" when the path is empty); the fragment is dropped. The path is taken
// as written (RawPath), so escapes of reserved characters (%2F, %3B, ...)
// stay escapes: bytes that may not appear raw are percent-encoded one by
// one and existing escapes are kept with upper-case hex. url.EscapedPath
// would rebuild the path from its decoded form as soon as one byte needs
// escaping, turning %2F into a literal '/'.
func RequestPath(u *url.URL) string {
	p := u.RawPath
	if p == "" {
		p = u.EscapedPath()
	}
	p = escapeRaw(p)
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + escapeRaw(u.RawQuery)
	}
	return p
}

// escapeRaw percent-encodes the bytes of s that may not appear raw in a
// URI and upper-cases the hex of existing escapes; a '%' that starts no
// escape becomes "%25". It returns s itself when nothing changes.
func escapeRaw(s string) string {
	i := 0
	for i < len(s) && !rawNeedsEscape(s, i) {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			writePct(&b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		case c == '%' || mustEscape(c):
			writePct(&b, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// rawNeedsEscape reports whether escapeRaw would rewrite s at i.
func rawNeedsEscape(s string, i int) bool {
	c := s[i]
	if c != '%' {
		return mustEscape(c)
	}
	return i+2 >= len(s) || !isUpperHex(s[i+1]) || !isUpperHex(s[i+2])
}

// wirePath is the path and query of u as a request for it sends them:
// the path as written when it is a valid escaping (escapes keep the case
// they were written in), "/" when empty.
func wirePath(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + u.RawQuery
	}
	return p
}
