package policy

import "strings"

// This file is a model of Google's reference robots.txt parser and matcher
// (github.com/google/robotstxt, robots.cc), written in Go for the tests
// from reading that source: the same character loop, line buffer, key and
// value split, callbacks and longest-match strategy, as a second,
// independent implementation beside googleReading. Nothing of Google's code
// is linked or vendored; the tests derive Google's expected answers from it.

// gmMaxLineLen is robots.cc's kMaxLineLen (8 × kBrowserMaxLineLen).
const gmMaxLineLen = 2083 * 8

// googleModelAllowed is RobotsMatcher::OneAgentAllowedByRobots: may agent
// fetch url under body?
func googleModelAllowed(body []byte, agent, url string) bool {
	m := &gmMatcher{agent: agent, path: gmPathParamsQuery(url)}
	m.allow.global, m.allow.specific = -1, -1
	m.disallow.global, m.disallow.specific = -1, -1
	gmParse(body, m)
	return !m.disallowed()
}

// gmParse is RobotsTxtParser::Parse: byte by byte into a line buffer of
// gmMaxLineLen-1 bytes, a possibly partial UTF-8 byte-order mark skipped,
// lines ending at LF, CR or CRLF.
func gmParse(body []byte, m *gmMatcher) {
	bom := []byte{0xEF, 0xBB, 0xBF}
	buf := make([]byte, 0, gmMaxLineLen)
	bomPos, lastCR, lineNum := 0, false, 0
	for _, ch := range body {
		if bomPos < len(bom) {
			match := ch == bom[bomPos]
			bomPos++
			if match {
				continue
			}
		}
		bomPos = len(bom)
		if ch != '\n' && ch != '\r' {
			if len(buf) < gmMaxLineLen-1 {
				buf = append(buf, ch)
			}
			continue
		}
		crlf := len(buf) == 0 && lastCR && ch == '\n'
		if !crlf {
			lineNum++
			gmLine(lineNum, buf, m)
		}
		buf = buf[:0]
		lastCR = ch == '\r'
	}
	lineNum++
	gmLine(lineNum, buf, m)
}

// gmLine is ParseAndEmitLine with GetKeyAndValueFrom: the buffer is a C
// string, so it ends at its first NUL.
func gmLine(n int, buf []byte, m *gmMatcher) {
	line := string(buf)
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = gmStrip(line)
	if line == "" {
		return
	}
	var key, value string
	if sep := strings.IndexByte(line, ':'); sep >= 0 {
		key, value = line[:sep], line[sep+1:]
	} else {
		sep := strings.IndexAny(line, " \t")
		if sep < 0 {
			return
		}
		val := strings.TrimLeft(line[sep:], " \t")
		if strings.ContainsAny(val, " \t") {
			return
		}
		key, value = line[:sep], line[sep+1:]
	}
	key, value = gmStrip(key), gmStrip(value)
	if key == "" {
		return
	}
	switch gmKeyType(key) {
	case "user-agent":
		m.userAgent(value)
	case "allow":
		m.rule(true, n, gmEscapePattern(value))
	case "disallow":
		m.rule(false, n, gmEscapePattern(value))
	}
}

// gmStrip is absl::StripAsciiWhitespace.
func gmStrip(s string) string {
	isSpace := func(c byte) bool {
		return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
	}
	for s != "" && isSpace(s[0]) {
		s = s[1:]
	}
	for s != "" && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// gmKeyType is GetKeyType with kAllowFrequentTypos.
func gmKeyType(key string) string {
	starts := func(p string) bool { return len(key) >= len(p) && strings.EqualFold(key[:len(p)], p) }
	switch {
	case starts("user-agent") || starts("useragent") || starts("user agent"):
		return "user-agent"
	case starts("allow"):
		return "allow"
	case starts("disallow") || starts("dissallow") || starts("dissalow") || starts("disalow") ||
		starts("diasllow") || starts("disallaw"):
		return "disallow"
	case starts("sitemap") || starts("site-map"):
		return "sitemap"
	}
	return "unknown"
}

// gmEscapePattern is MaybeEscapePattern.
func gmEscapePattern(s string) string {
	const hex = "0123456789ABCDEF"
	isX := func(c byte) bool {
		return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
	}
	up := func(c byte) byte {
		if 'a' <= c && c <= 'z' {
			return c - 'a' + 'A'
		}
		return c
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '%' && i+2 < len(s) && isX(s[i+1]) && isX(s[i+2]):
			b.WriteByte('%')
			b.WriteByte(up(s[i+1]))
			b.WriteByte(up(s[i+2]))
			i += 2
		case s[i]&0x80 != 0:
			b.WriteByte('%')
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// gmPathParamsQuery is GetPathParamsQuery: the path, params and query of
// url, "/" when it has none.
func gmPathParamsQuery(url string) string {
	searchStart := 0
	if len(url) >= 2 && url[0] == '/' && url[1] == '/' {
		searchStart = 2
	}
	find := func(s string, from int, f func(string) int) int {
		if from > len(s) {
			return -1
		}
		if i := f(s[from:]); i >= 0 {
			return i + from
		}
		return -1
	}
	earlyPath := find(url, searchStart, func(s string) int { return strings.IndexAny(s, "/?;") })
	protocolEnd := find(url, searchStart, func(s string) int { return strings.Index(s, "://") })
	if earlyPath >= 0 && (protocolEnd < 0 || earlyPath < protocolEnd) {
		protocolEnd = -1
	}
	if protocolEnd < 0 {
		protocolEnd = searchStart
	} else {
		protocolEnd += 3
	}
	pathStart := find(url, protocolEnd, func(s string) int { return strings.IndexAny(s, "/?;") })
	if pathStart < 0 {
		return "/"
	}
	hashPos := find(url, searchStart, func(s string) int { return strings.IndexByte(s, '#') })
	if hashPos >= 0 && hashPos < pathStart {
		return "/"
	}
	pathEnd := len(url)
	if hashPos >= 0 {
		pathEnd = hashPos
	}
	if url[pathStart] != '/' {
		return "/" + url[pathStart:pathEnd]
	}
	return url[pathStart:pathEnd]
}

// gmMatcher is RobotsMatcher with the longest-match strategy, for one agent.
type gmMatcher struct {
	agent, path string

	seenGlobal, seenSpecific, everSeenSpecific, seenSeparator bool
	allow, disallow                                           struct{ global, specific int }
}

func (m *gmMatcher) userAgent(ua string) {
	if m.seenSeparator {
		m.seenSpecific, m.seenGlobal, m.seenSeparator = false, false, false
	}
	if len(ua) >= 1 && ua[0] == '*' && (len(ua) == 1 || strings.IndexByte(" \t\n\v\f\r", ua[1]) >= 0) {
		m.seenGlobal = true
		return
	}
	end := 0
	for end < len(ua) && (('a' <= ua[end] && ua[end] <= 'z') || ('A' <= ua[end] && ua[end] <= 'Z') || ua[end] == '-' || ua[end] == '_') {
		end++
	}
	if strings.EqualFold(ua[:end], m.agent) {
		m.everSeenSpecific, m.seenSpecific = true, true
	}
}

func (m *gmMatcher) rule(allow bool, n int, pattern string) {
	if !m.seenGlobal && !m.seenSpecific {
		return
	}
	m.seenSeparator = true
	priority := -1
	if gmMatches(m.path, pattern) {
		priority = len(pattern)
	}
	if priority < 0 && allow {
		// 'index.htm' and 'index.html' are normalised to '/'.
		if slash := strings.LastIndexByte(pattern, '/'); slash >= 0 && strings.HasPrefix(pattern[slash:], "/index.htm") {
			m.rule(true, n, pattern[:slash+1]+"$")
		}
		return
	}
	if priority < 0 {
		return
	}
	target := &m.disallow
	if allow {
		target = &m.allow
	}
	if m.seenSpecific {
		target.specific = max(target.specific, priority)
	} else {
		target.global = max(target.global, priority)
	}
}

func (m *gmMatcher) disallowed() bool {
	if m.allow.specific > 0 || m.disallow.specific > 0 {
		return m.disallow.specific > m.allow.specific
	}
	if m.everSeenSpecific {
		return false
	}
	if m.disallow.global > 0 || m.allow.global > 0 {
		return m.disallow.global > m.allow.global
	}
	return false
}

// gmMatches is RobotsMatchStrategy::Matches: the positions of path that can
// follow the pattern read so far.
func gmMatches(path, pattern string) bool {
	pos := make([]int, len(path)+1)
	numpos := 1
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '$' && i+1 == len(pattern) {
			return pos[numpos-1] == len(path)
		}
		if c == '*' {
			numpos = len(path) - pos[0] + 1
			for k := 1; k < numpos; k++ {
				pos[k] = pos[k-1] + 1
			}
			continue
		}
		n := 0
		for k := 0; k < numpos; k++ {
			if pos[k] < len(path) && path[pos[k]] == c {
				pos[n] = pos[k] + 1
				n++
			}
		}
		numpos = n
		if numpos == 0 {
			return false
		}
	}
	return true
}
