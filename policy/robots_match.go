package policy

import "strings"

// robotsRule is one Allow or Disallow line.
type robotsRule struct {
	text string // the line as written, comment and surrounding blanks removed
	// pattern is the normalised pattern; its length in octets is the rule's
	// priority (RFC 9309 §2.2.2), wildcards and the end anchor included.
	pattern string
	line    int32
	allow   bool
	// anchored: the pattern ends with '$', so the match must reach the end.
	anchored bool
	// never: an empty pattern, or one not starting with '/' or '*'.
	never bool
}

// newRobotsRule compiles a rule value.
func newRobotsRule(allow bool, line int, text, value string) robotsRule {
	r := robotsRule{allow: allow, line: int32(line), text: text}
	r.pattern = normalisePath(value)
	if r.pattern == "" || (r.pattern[0] != '/' && r.pattern[0] != '*') {
		r.never = true
		return r
	}
	r.anchored = strings.HasSuffix(r.pattern, "$")
	return r
}

// matches reports whether the pattern matches path (normalised path and
// query) from its first octet: '*' matches any run of octets, a final '$'
// anchors the end, and every other octet, a '$' elsewhere included, matches
// itself.
func (r *robotsRule) matches(path string) bool {
	if r.never {
		return false
	}
	pat := r.pattern
	if r.anchored {
		pat = pat[:len(pat)-1]
	}
	firstStar := strings.IndexByte(pat, '*')
	if firstStar < 0 {
		return strings.HasPrefix(path, pat) && (!r.anchored || len(path) == len(pat))
	}
	if !strings.HasPrefix(path, pat[:firstStar]) {
		return false
	}
	lastStar := strings.LastIndexByte(pat, '*')
	pos := firstStar
	middle := pat[firstStar+1 : max(lastStar, firstStar+1)]
	last := pat[lastStar+1:]
	end := len(path)
	if r.anchored {
		// The last part must sit at the very end; the middle parts must fit
		// before it. Leftmost placement of each middle part is optimal.
		if len(path)-pos < len(last) || !strings.HasSuffix(path, last) {
			return false
		}
		end = len(path) - len(last)
	}
	for middle != "" {
		seg := middle
		if k := strings.IndexByte(middle, '*'); k >= 0 {
			seg, middle = middle[:k], middle[k+1:]
		} else {
			middle = ""
		}
		i := strings.Index(path[pos:end], seg)
		if i < 0 {
			return false
		}
		pos += i + len(seg)
	}
	if r.anchored {
		return true
	}
	return strings.Contains(path[pos:], last)
}

// normalisePathQuery normalises a request's path and query for matching.
func normalisePathQuery(p string) string {
	p = normalisePath(p)
	switch {
	case p == "":
		return "/"
	case p[0] != '/':
		return "/" + p
	}
	return p
}

const upperHex = "0123456789ABCDEF"

// writePct writes v as a percent escape with upper-case hex digits.
func writePct(b *strings.Builder, v byte) {
	b.WriteByte('%')
	b.WriteByte(upperHex[v>>4])
	b.WriteByte(upperHex[v&15])
}

// normalisePath brings a rule pattern or a request path to the one form
// RFC 9309 §2.2.2 compares: octets that may not appear raw in a URI (non-ASCII,
// controls, space and "<>\^`{|}) are percent-encoded, escapes get upper-case
// hex, escapes of unreserved characters are decoded, and a '%' that starts no
// escape becomes "%25". '*' and '$' are left alone. It returns p itself when
// nothing changes.
func normalisePath(p string) string {
	i := 0
	for i < len(p) && !needsNormalising(p, i) {
		i++
	}
	if i == len(p) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 8)
	b.WriteString(p[:i])
	for ; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			v := unhex(p[i+1])<<4 | unhex(p[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				writePct(&b, v)
			}
			i += 2
		case c == '%' || mustEscape(c):
			writePct(&b, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// needsNormalising reports whether normalisePath would rewrite p at i.
func needsNormalising(p string, i int) bool {
	c := p[i]
	if c != '%' {
		return mustEscape(c)
	}
	if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
		return true
	}
	return isUnreserved(unhex(p[i+1])<<4|unhex(p[i+2])) || !isUpperHex(p[i+1]) || !isUpperHex(p[i+2])
}

// mustEscape reports whether c may not appear raw in a URI.
func mustEscape(c byte) bool {
	if c <= ' ' || c >= 0x7f {
		return true
	}
	switch c {
	case '"', '<', '>', '\\', '^', '`', '{', '|', '}':
		return true
	}
	return false
}

// isUnreserved reports whether c is an RFC 3986 unreserved character.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
