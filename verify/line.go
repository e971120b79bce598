package verify

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrUnreadable: a log line or a field could not be read. Errors wrapping it
// are *FieldError, which names the part.
var ErrUnreadable = errors.New("unreadable log line")

// FieldError says which part of a log line (or which field) could not be
// read, what it held and what was expected.
type FieldError struct {
	// Field names the part: "line", "time", "client address", "request",
	// "method", "path", "status", "host".
	Field string
	// Value is what was there (shortened, "" when the part is missing).
	Value string
	// Want says what would have been readable.
	Want string
}

// Error quotes the value with Go escapes, so a control character in a pasted
// line never reaches a terminal or a log as itself.
func (e *FieldError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: the %s is missing: %s", ErrUnreadable, e.Field, e.Want)
	}
	return fmt.Sprintf("%s: the %s %s could not be read: %s", ErrUnreadable, e.Field, quote(e.Value), e.Want)
}

// Unwrap makes errors.Is(err, ErrUnreadable) true.
func (e *FieldError) Unwrap() error { return ErrUnreadable }

// quote shortens s to 80 bytes and quotes it with Go escapes.
func quote(s string) string {
	if len(s) > 80 {
		cut := 80
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}

// MaxLine caps the length of a log line or field the parsers read.
const MaxLine = 8 << 10

// Claim is what a site's log says about one request, to be matched against
// the records.
type Claim struct {
	// Time is when the site logged the request.
	Time time.Time
	// Precision is how much later than Time the request may have arrived:
	// one second for log lines, whose times are whole seconds.
	Precision time.Duration
	// Client is the address the request came from.
	Client netip.Addr
	// Host is the site's host name, lower-case, without port or final dot.
	Host string
	// Port is the site's port, 0 when the line does not say.
	Port int
	// Method is the request method.
	Method string
	// Path is the request target's path as sent; Query its query string
	// (after '?').
	Path, Query string
	// UserAgent is the User-Agent header, "" when the line has none.
	UserAgent string
}

// logTime is the common log format's time layout.
const logTime = "02/Jan/2006:15:04:05 -0700"

// token is one part of a log line: a bare word, a [bracketed] time or a
// "quoted" string (without its delimiters, escapes undone).
type token struct {
	text string
	kind byte // ' ', '[' or '"'
}

// ParseLine reads a common or combined log format line, optionally led by
// the virtual host (host or host:port, as Apache's %v:%p writes it). host,
// when not empty, names the site and overrides the line's virtual host; one
// of the two is required. Errors wrap ErrUnreadable and name the part.
func ParseLine(line, host string) (Claim, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return Claim{}, &FieldError{Field: "line", Want: `paste one line of the access log, such as 203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1" 200 512`}
	}
	if len(line) > MaxLine {
		return Claim{}, &FieldError{Field: "line", Value: line, Want: fmt.Sprintf("at most %d bytes", MaxLine)}
	}
	toks, err := tokens(line)
	if err != nil {
		return Claim{}, err
	}
	at := -1
	for i, t := range toks {
		if t.kind == '[' {
			at = i
			break
		}
	}
	if at < 0 {
		return Claim{}, &FieldError{Field: "time", Want: "a time in brackets, such as [01/Dec/2026:12:03:41 +0000]"}
	}
	var c Claim
	var vhost string
	switch at {
	case 3: // client ident user
	case 4: // vhost client ident user
		vhost = toks[0].text
	default:
		return Claim{}, &FieldError{Field: "line", Value: line,
			Want: `want [vhost] client ident user [time] "request" status bytes ["referer" "user agent"]`}
	}
	if c.Client, err = parseClient(toks[at-3].text); err != nil {
		return Claim{}, err
	}
	if c.Time, err = parseLogTime(toks[at].text); err != nil {
		return Claim{}, err
	}
	c.Precision = time.Second
	rest := toks[at+1:]
	if len(rest) == 0 || rest[0].kind != '"' {
		return Claim{}, &FieldError{Field: "request", Value: tokenText(rest), Want: `the request line in quotes after the time, such as "GET /page HTTP/1.1"`}
	}
	if err := c.readRequest(rest[0].text); err != nil {
		return Claim{}, err
	}
	if len(rest) > 1 {
		if _, err := strconv.Atoi(rest[1].text); err != nil || len(rest[1].text) != 3 {
			return Claim{}, &FieldError{Field: "status", Value: rest[1].text, Want: "a three-digit HTTP status after the request"}
		}
	}
	if len(rest) > 4 && rest[4].kind == '"' && rest[4].text != "-" {
		c.UserAgent = rest[4].text
	}
	if host == "" {
		host = vhost
	}
	if err := c.setHost(host); err != nil {
		return Claim{}, err
	}
	return c, nil
}

// tokenText is the first token's text, for an error.
func tokenText(ts []token) string {
	if len(ts) == 0 {
		return ""
	}
	return ts[0].text
}

// tokens splits a log line into words, [bracketed] and "quoted" parts; in a
// quoted part, \" and \\ stand for themselves.
func tokens(line string) ([]token, error) {
	var out []token
	for i := 0; i < len(line); {
		switch line[i] {
		case ' ', '\t':
			i++
		case '[':
			end := strings.IndexByte(line[i:], ']')
			if end < 0 {
				return nil, &FieldError{Field: "time", Value: line[i:], Want: "a closing ]"}
			}
			out = append(out, token{text: line[i+1 : i+end], kind: '['})
			i += end + 1
		case '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) && (line[j+1] == '"' || line[j+1] == '\\') {
					j++
				}
				b.WriteByte(line[j])
			}
			if j >= len(line) {
				return nil, &FieldError{Field: "line", Value: line[i:], Want: "a closing quote"}
			}
			out = append(out, token{text: b.String(), kind: '"'})
			i = j + 1
		default:
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\t' {
				j++
			}
			out = append(out, token{text: line[i:j], kind: ' '})
			i = j
		}
	}
	return out, nil
}

// parseClient reads the client address.
func parseClient(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}, &FieldError{Field: "client address", Value: s,
			Want: "an IP address (a log that writes host names instead cannot be verified)"}
	}
	return a.Unmap().WithZone(""), nil
}

// parseLogTime reads 01/Dec/2026:12:03:41 +0000.
func parseLogTime(s string) (time.Time, error) {
	t, err := time.Parse(logTime, s)
	if err != nil {
		return time.Time{}, &FieldError{Field: "time", Value: s, Want: "day/month/year:hour:minute:second offset, such as 01/Dec/2026:12:03:41 +0000"}
	}
	return t, nil
}

// readRequest reads "METHOD TARGET [PROTOCOL]".
func (c *Claim) readRequest(s string) error {
	parts := strings.Fields(s)
	if len(parts) < 2 || len(parts) > 3 {
		return &FieldError{Field: "request", Value: s, Want: `method, target and protocol, such as "GET /page HTTP/1.1"`}
	}
	if err := c.setMethod(parts[0]); err != nil {
		return err
	}
	return c.setTarget(parts[1])
}

// setMethod checks an HTTP method token.
func (c *Claim) setMethod(m string) error {
	if m == "" || len(m) > 20 || strings.IndexFunc(m, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 {
		return &FieldError{Field: "method", Value: m, Want: "an HTTP method in capitals, such as GET"}
	}
	c.Method = m
	return nil
}

// setTarget reads a request target: /path?query, or an absolute URL.
func (c *Claim) setTarget(t string) error {
	for _, scheme := range []string{"http://", "https://"} {
		if rest, ok := strings.CutPrefix(t, scheme); ok {
			t = "/"
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				t = rest[i:]
			}
		}
	}
	if !strings.HasPrefix(t, "/") || strings.ContainsAny(t, " \t\r\n") {
		return &FieldError{Field: "path", Value: t, Want: "a path starting with /"}
	}
	c.Path, c.Query, _ = strings.Cut(t, "?")
	if i := strings.IndexByte(c.Query, '#'); i >= 0 {
		c.Query = c.Query[:i]
	}
	return nil
}

// setHost reads host or host:port.
func (c *Claim) setHost(h string) error {
	h = strings.TrimSpace(h)
	if h == "" {
		return &FieldError{Field: "host", Want: "the line has no virtual host; give the site's host name (the Host header of the request)"}
	}
	name, port := h, ""
	if strings.LastIndexByte(h, ':') > strings.LastIndexByte(h, ']') {
		var err error
		if name, port, err = net.SplitHostPort(h); err != nil {
			return &FieldError{Field: "host", Value: h, Want: "a host name, optionally with :port"}
		}
	}
	name = strings.TrimSuffix(strings.ToLower(strings.Trim(name, "[]")), ".")
	if name == "" || len(name) > 253 || strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' || r == ':')
	}) >= 0 {
		return &FieldError{Field: "host", Value: h, Want: "a host name in ASCII (punycode for international names), optionally with :port"}
	}
	c.Host, c.Port = name, 0
	if port != "" {
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return &FieldError{Field: "host", Value: h, Want: "a port between 1 and 65535"}
		}
		c.Port = p
	}
	return nil
}

// Fields are the parts of a request typed in one by one, for logs in
// another format.
type Fields struct {
	// Time with its offset: RFC 3339 (2026-12-01T12:03:41.208Z) or the
	// common log format's 01/Dec/2026:12:03:41 +0000.
	Time string
	// Client is the IP address the request came from.
	Client string
	// Host is the site's host name (the request's Host header).
	Host string
	// Method, Path (with the query as sent) and the optional UserAgent.
	Method, Path, UserAgent string
}

// ParseFields reads fields into a claim; errors wrap ErrUnreadable and
// name the field.
func ParseFields(f Fields) (Claim, error) {
	var c Claim
	for _, v := range []string{f.Time, f.Client, f.Host, f.Method, f.Path, f.UserAgent} {
		if len(v) > MaxLine {
			return Claim{}, &FieldError{Field: "line", Value: v, Want: fmt.Sprintf("at most %d bytes per field", MaxLine)}
		}
	}
	ts := strings.Trim(strings.TrimSpace(f.Time), "[]")
	switch t, err := time.Parse(time.RFC3339Nano, ts); {
	case ts == "":
		return Claim{}, &FieldError{Field: "time", Want: "a time with its offset, such as 2026-12-01T12:03:41Z"}
	case err == nil:
		c.Time = t
		if t.Nanosecond() == 0 && !strings.Contains(ts, ".") {
			c.Precision = time.Second
		}
	default:
		if c.Time, err = parseLogTime(ts); err != nil {
			return Claim{}, &FieldError{Field: "time", Value: ts, Want: "RFC 3339 with an offset (2026-12-01T12:03:41Z) or 01/Dec/2026:12:03:41 +0000"}
		}
		c.Precision = time.Second
	}
	var err error
	if strings.TrimSpace(f.Client) == "" {
		return Claim{}, &FieldError{Field: "client address", Want: "the IP address the request came from"}
	}
	if c.Client, err = parseClient(strings.TrimSpace(f.Client)); err != nil {
		return Claim{}, err
	}
	if err := c.setMethod(strings.TrimSpace(f.Method)); err != nil {
		return Claim{}, err
	}
	if err := c.setTarget(strings.TrimSpace(f.Path)); err != nil {
		return Claim{}, err
	}
	if ua := strings.TrimSpace(f.UserAgent); ua != "-" {
		c.UserAgent = ua
	}
	if err := c.setHost(f.Host); err != nil {
		return Claim{}, err
	}
	return c, nil
}
