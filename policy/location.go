package policy

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// One spelling of every URL: Chromium does not request a URL as written.
// It reads it with the WHATWG URL parser (tabs and newlines dropped,
// backslashes read as slashes, "%2e%2e" read as "..", the host
// canonicalised, some bytes escaped, ...) and requests the result. Both
// lanes send that spelling (the plain lane's Go client is handed it), and
// robots.txt, redirect chains and the audited page are matched on it.
// ResolveLocation is that reading, limited to what a redirect of an
// http(s) request can be; RequestTarget and SpellTarget apply it to a
// URL's path and query.

// errNotFollowed is ResolveLocation's error for a Location that Chromium
// would not request as http(s).
var errNotFollowed = errors.New("not an http(s) URL Chromium would request")

// webURL is a parsed http(s) URL without its fragment.
type webURL struct {
	scheme string // "http" or "https"
	host   string // canonical host, with ":port" unless it is the default
	path   []string
	query  *string // nil: no "?"
}

// String serialises u as Chromium does.
func (u webURL) String() string {
	return u.scheme + "://" + u.host + u.target()
}

// target is u's path and query as Chromium sends them in a request line.
func (u webURL) target() string {
	var b strings.Builder
	if len(u.path) == 0 {
		b.WriteByte('/')
	}
	for _, seg := range u.path {
		b.WriteByte('/')
		b.WriteString(seg)
	}
	if u.query != nil {
		b.WriteByte('?')
		b.WriteString(*u.query)
	}
	return b.String()
}

// RequestTarget is the path and query of u as Chromium spells them in the
// request line: the path as written (RawPath when Go kept it, so escapes
// keep their case and %2F stays an escape) with dot segments removed and
// the bytes Chromium escapes escaped, the query likewise; no fragment.
// Both lanes send this spelling (ParseTarget and the plain lane's
// redirects spell URLs so), and robots.txt decides on it, so one request gets one answer however its URL was written.
func RequestTarget(u *url.URL) string {
	if u.Opaque != "" {
		return u.RequestURI()
	}
	p := u.RawPath
	if p == "" {
		p = u.EscapedPath()
	}
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + u.RawQuery
	}
	return SpellTarget(p)
}

// SpellTarget is RequestTarget for a path and query written as text
// ("/a/b?c"; "" and a path without its leading slash are read as if it
// had one).
func SpellTarget(pathQuery string) string {
	w := parsePath(webURL{}, strings.TrimPrefix(dropTabsAndNewlines(pathQuery), "/"))
	return w.target()
}

// ResolveLocation returns the URL Chromium requests when a response to
// base redirects to the raw Location loc, without its fragment, or an error
// when Chromium would not follow loc as an http(s) request. base must be
// an absolute http(s) URL.
func ResolveLocation(base, loc string) (string, error) {
	b, err := parseWebURL(base, nil)
	if err != nil {
		return "", fmt.Errorf("read base %q: %w", base, err)
	}
	u, err := parseWebURL(loc, &b)
	if err != nil {
		return "", fmt.Errorf("read location %q: %w", loc, err)
	}
	return u.String(), nil
}

// parseWebURL parses input, relative to base when base is not nil.
func parseWebURL(input string, base *webURL) (webURL, error) {
	input = strings.TrimFunc(input, func(r rune) bool { return r <= 0x20 })
	input = dropTabsAndNewlines(input)
	if scheme, rest, ok := cutWebScheme(input); ok {
		if scheme != "http" && scheme != "https" {
			return webURL{}, errNotFollowed
		}
		if base == nil || scheme != base.scheme || twoSlashes(rest) {
			// Any number of slashes of either kind, then the authority.
			return parseAuthority(scheme, strings.TrimLeft(rest, `/\`))
		}
		input = rest // "http:path" relative to an http base
	}
	if base == nil {
		return webURL{}, errNotFollowed
	}
	if twoSlashes(input) {
		return parseAuthority(base.scheme, strings.TrimLeft(input, `/\`))
	}
	u := webURL{scheme: base.scheme, host: base.host}
	switch {
	case input == "", input[0] == '#':
		u.path, u.query = base.path, base.query
		return u, nil
	case input[0] == '?':
		u.path = base.path
		return withQuery(u, input[1:]), nil
	case input[0] == '/' || input[0] == '\\':
		input = input[1:]
	default:
		if len(base.path) > 0 {
			u.path = append(u.path, base.path[:len(base.path)-1]...)
		}
	}
	return parsePath(u, input), nil
}

// dropTabsAndNewlines removes every tab, CR and LF byte of s, and leaves
// every other byte as it is: an invalid UTF-8 sequence is requested as its
// bytes, escaped, never as U+FFFD.
func dropTabsAndNewlines(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && c != '\n' && c != '\r' {
			b = append(b, c)
		}
	}
	return string(b)
}

// cutWebScheme splits "scheme:rest", the scheme lower-cased.
func cutWebScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(s[:i]), s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// twoSlashes reports whether s starts with two slashes of either kind.
func twoSlashes(s string) bool {
	return len(s) >= 2 && (s[0] == '/' || s[0] == '\\') && (s[1] == '/' || s[1] == '\\')
}

// parseAuthority parses "[userinfo@]host[:port]" and what follows it.
func parseAuthority(scheme, s string) (webURL, error) {
	end := strings.IndexAny(s, `/\?#`)
	if end < 0 {
		end = len(s)
	}
	auth, rest := s[:end], s[end:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:] // credentials are never sent: not part of the URL requested
	}
	hostname, port := auth, ""
	if i := strings.LastIndexByte(auth, ':'); i >= 0 && !strings.Contains(auth[i:], "]") {
		hostname, port = auth[:i], auth[i+1:]
	}
	host, err := canonicalURLHost(hostname)
	if err != nil {
		return webURL{}, err
	}
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return webURL{}, fmt.Errorf("port %q: %w", port, errNotFollowed)
		}
		if def := map[string]uint64{"http": 80, "https": 443}[scheme]; n != def {
			host += ":" + strconv.FormatUint(n, 10)
		}
	}
	u := webURL{scheme: scheme, host: host}
	switch {
	case rest == "":
		return u, nil
	case rest[0] == '?':
		return withQuery(u, rest[1:]), nil
	case rest[0] == '#':
		return u, nil
	}
	return parsePath(u, rest[1:]), nil
}

// canonicalURLHost percent-decodes a host and canonicalises it.
func canonicalURLHost(raw string) (string, error) {
	decoded := UnescapeAll(raw)
	if decoded == "" {
		return "", fmt.Errorf("empty host: %w", errNotFollowed)
	}
	host, err := CanonicalHost(decoded)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errNotFollowed, err)
	}
	return host, nil
}

// UnescapeAll decodes every %XX of s and leaves a lone % as it is.
func UnescapeAll(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if v, ok := hexByte(s, i); ok {
			b.WriteByte(v)
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parsePath reads the path after its first slash (and any query) into u,
// removing dot segments and escaping as Chromium does.
func parsePath(u webURL, s string) webURL {
	var query *string
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		if s[i] == '?' {
			q := s[i+1:]
			if j := strings.IndexByte(q, '#'); j >= 0 {
				q = q[:j]
			}
			query = &q
		}
		s = s[:i]
	}
	segs := strings.Split(strings.ReplaceAll(s, `\`, "/"), "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		seg = escapePathSegment(seg)
		switch {
		case isDoubleDot(seg):
			if len(u.path) > 0 {
				u.path = u.path[:len(u.path)-1]
			}
			if last {
				u.path = append(u.path, "")
			}
		case isSingleDot(seg):
			if last {
				u.path = append(u.path, "")
			}
		default:
			u.path = append(u.path, seg)
		}
	}
	if query != nil {
		return withQuery(u, *query)
	}
	return u
}

// isDoubleDot reports whether seg is "..", in any of its escaped forms.
func isDoubleDot(seg string) bool {
	switch strings.ToLower(seg) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

// isSingleDot reports whether seg is ".", escaped or not.
func isSingleDot(seg string) bool { return seg == "." || strings.EqualFold(seg, "%2e") }

// escapedByChromium reports whether Chromium escapes the ASCII byte c in a
// path (or a query, when query is set): the controls, space and DEL, and
// in a path the WHATWG path percent-encode set with "^" and "|" besides
// (measured: TestResolveLocationAgreesWithChromium), in a query "'<>.
func escapedByChromium(c byte, query bool) bool {
	if c <= 0x20 || c == 0x7f {
		return true
	}
	if query {
		return strings.IndexByte(`"'<>`, c) >= 0
	}
	return strings.IndexByte("\"<>`{}^|", c) >= 0
}

// escapePathSegment escapes the bytes of a path segment that Chromium
// escapes ("#" and "?" too, should one be there); escapes already there
// stay as written.
func escapePathSegment(seg string) string {
	return escapeBytes(seg, func(c byte) bool { return c == '#' || c == '?' || escapedByChromium(c, false) })
}

// escapeBytes percent-encodes the controls, space and non-ASCII bytes of
// s, and the bytes also reports true for.
func escapeBytes(s string, also func(byte) bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || also(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// withQuery sets u's query, escaped as Chromium escapes a query.
func withQuery(u webURL, q string) webURL {
	if i := strings.IndexByte(q, '#'); i >= 0 {
		q = q[:i]
	}
	q = escapeQuery(q)
	u.query = &q
	return u
}

// hexByte decodes the %XX at s[i], if there is one.
func hexByte(s string, i int) (byte, bool) {
	if i+2 >= len(s) || s[i] != '%' || !isHex(s[i+1]) || !isHex(s[i+2]) {
		return 0, false
	}
	return unhex(s[i+1])<<4 | unhex(s[i+2]), true
}

// escapeQuery percent-encodes the bytes of a query that Chromium encodes
// before sending it.
func escapeQuery(q string) string {
	return escapeBytes(q, func(c byte) bool { return escapedByChromium(c, true) })
}
