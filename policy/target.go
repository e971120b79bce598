package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseTarget parses, normalises and validates a submitted URL without any
// network activity. Errors wrap ErrInvalidURL or ErrTargetRefused.
//
// Normalisation: scheme and host lower-cased, the host mapped to ASCII as
// browsers do (IDN to punycode, full-width forms folded, IPv4 in any
// WHATWG spelling written as dotted decimal, IPv6 in canonical form), one
// trailing dot of the host dropped, the default port dropped, the fragment
// dropped, path and query spelled as Chromium sends them (SpellTarget: an
// empty path made "/", dot segments removed, the bytes Chromium escapes
// escaped, the escapes written kept as written).
//
// Each error wraps exactly one class. ErrInvalidURL, the input is not a
// usable http(s) URL: empty, more than MaxURLBytes, a byte <= 0x20, 0x7F or
// a backslash anywhere, invalid UTF-8, a scheme other than http/https, no
// "//" authority, an empty or malformed host (bad IDN, characters outside
// DNS letters, digits, "-" and "_", empty labels, labels over 63 bytes), a
// "%" in the host (percent-encoding, IPv6 zone ids), a host ending in a
// number that is not a valid IPv4 address, a port that is not canonical
// decimal 1-65535, a malformed path escape. ErrTargetRefused, a well-formed
// URL LektaBot will not fetch: userinfo (LektaBot never sends credentials),
// an IP literal in a special-use range in any spelling (unless the exact
// address:port is in AllowAddrs), an internal-only name, a port other than
// 80 and 443 that is not in AllowPorts. A name with a Resolve rule for its
// host:port skips the name and port refusals; the dial checks the rule's
// address.
func (g *Guard) ParseTarget(raw string) (*url.URL, error) {
	if err := checkRawBytes(raw); err != nil {
		return nil, err
	}
	scheme, rest, err := cutScheme(raw)
	if err != nil {
		return nil, err
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, rest = rest[:i], rest[i:]
	} else {
		rest = ""
	}
	if strings.IndexByte(authority, '@') >= 0 {
		return nil, refuseCredentials()
	}
	hostport, err := g.checkAuthority(scheme, authority)
	if err != nil {
		return nil, err
	}
	// Spell path and query as Chromium sends them (no fragment, "/" for an
	// empty path), keeping the escapes the submitter wrote, so that both lanes send the same bytes and robots.txt
	// is decided on them (SpellTarget): "/café%2Fb" stays one path segment,
	// "/caf%C3%A9%2Fb", instead of becoming "/caf%C3%A9/b", another
	// resource.
	norm := scheme + "://" + hostport + SpellTarget(rest)
	u, err := url.Parse(norm)
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	if n := len(u.String()); n > MaxURLBytes {
		return nil, fmt.Errorf("%w: the URL is %d bytes once normalised, more than %d", ErrInvalidURL, n, MaxURLBytes)
	}
	return u, nil
}

// CheckURL validates an absolute URL met later (a redirect hop, a
// navigation) by the same rules as ParseTarget. The URL's path and query
// are not checked byte by byte: Go and browsers escape them when sending.
func (g *Guard) CheckURL(u *url.URL) error {
	if u == nil {
		return fmt.Errorf("%w: no URL", ErrInvalidURL)
	}
	scheme := lowerASCII(u.Scheme)
	if err := checkScheme(scheme); err != nil {
		return err
	}
	if u.Opaque != "" || u.Host == "" {
		return fmt.Errorf("%w: %s: URL has no host", ErrInvalidURL, scheme)
	}
	if u.User != nil {
		return refuseCredentials()
	}
	if n := len(u.String()); n > MaxURLBytes {
		return fmt.Errorf("%w: the URL is %d bytes, more than %d", ErrInvalidURL, n, MaxURLBytes)
	}
	for i := 0; i < len(u.Host); i++ {
		if c := u.Host[i]; c <= 0x20 || c == 0x7f || c == '\\' {
			return fmt.Errorf("%w: host %q contains %q", ErrInvalidURL, u.Host, c)
		}
	}
	_, err := g.checkAuthority(scheme, u.Host)
	return err
}

// checkRawBytes applies the byte rules to the raw input.
func checkRawBytes(raw string) error {
	if raw == "" {
		return fmt.Errorf("%w: the URL is empty", ErrInvalidURL)
	}
	if len(raw) > MaxURLBytes {
		return fmt.Errorf("%w: the URL is %d bytes, more than %d", ErrInvalidURL, len(raw), MaxURLBytes)
	}
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == ' ':
			return fmt.Errorf("%w: the URL contains a space at byte %d", ErrInvalidURL, i)
		case c < 0x20 || c == 0x7f:
			return fmt.Errorf("%w: the URL contains control character %#02x at byte %d", ErrInvalidURL, c, i)
		case c == '\\':
			return fmt.Errorf("%w: the URL contains a backslash at byte %d", ErrInvalidURL, i)
		}
	}
	if !utf8.ValidString(raw) {
		return fmt.Errorf("%w: the URL is not valid UTF-8", ErrInvalidURL)
	}
	return nil
}

// cutScheme splits "scheme://rest", lower-casing and checking the scheme.
func cutScheme(raw string) (scheme, rest string, err error) {
	i := strings.IndexByte(raw, ':')
	if i <= 0 || !validScheme(raw[:i]) {
		return "", "", fmt.Errorf("%w: %q has no scheme; start it with https:// or http://", ErrInvalidURL, raw)
	}
	scheme = lowerASCII(raw[:i])
	if err := checkScheme(scheme); err != nil {
		return "", "", err
	}
	rest, ok := strings.CutPrefix(raw[i+1:], "//")
	if !ok {
		return "", "", fmt.Errorf("%w: %s: must be followed by //", ErrInvalidURL, scheme)
	}
	return scheme, rest, nil
}

// validScheme reports whether s has the RFC 3986 scheme syntax.
func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

func checkScheme(scheme string) error {
	switch scheme {
	case "http", "https":
		return nil
	case "":
		return fmt.Errorf("%w: the URL is not absolute; start it with https:// or http://", ErrInvalidURL)
	}
	return fmt.Errorf("%w: scheme %q is not supported, only http and https", ErrInvalidURL, scheme)
}

func refuseCredentials() error {
	return fmt.Errorf("%w: the URL contains credentials (user@host); LektaBot never sends credentials", ErrTargetRefused)
}

// checkAuthority validates HOST[:PORT] for scheme and returns it
// normalised, the default port dropped.
func (g *Guard) checkAuthority(scheme, authority string) (string, error) {
	rawHost, portStr, hasPort, err := splitAuthority(authority)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	h, err := parseHost(rawHost)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	port := defaultPort(scheme)
	if hasPort {
		if port, err = ParsePort(portStr); err != nil {
			return "", fmt.Errorf("%w: %v", ErrInvalidURL, err)
		}
	}
	if err := g.checkHostPolicy(rawHost, h, port); err != nil {
		return "", err
	}
	if port == defaultPort(scheme) {
		return h.name, nil
	}
	return h.name + ":" + strconv.Itoa(int(port)), nil
}

// checkHostPolicy applies the refusals to a parsed host and its port.
func (g *Guard) checkHostPolicy(rawHost string, h host, port uint16) error {
	if h.addr.IsValid() {
		if g.addrAllowed(netip.AddrPortFrom(h.addr, port)) {
			return nil
		}
		if why := g.addrRefusal(h.addr); why != "" {
			return fmt.Errorf("%w: %s", ErrTargetRefused, describeLiteral(rawHost, h, why))
		}
		return g.checkPort(port)
	}
	if _, ok := g.rules[ruleKey{h.name, port}]; ok {
		return nil // an operator's rule decides where this goes; the dial checks it
	}
	if why := internalName(h.name); why != "" {
		return fmt.Errorf("%w: %s is %s", ErrTargetRefused, h.name, why)
	}
	return g.checkPort(port)
}

func (g *Guard) checkPort(port uint16) error {
	if g.portAllowed(port) {
		return nil
	}
	allowed := "80 and 443"
	if len(g.cfg.AllowPorts) > 0 {
		ps := make([]string, 0, len(g.cfg.AllowPorts)+2)
		ps = append(ps, "80", "443")
		for _, p := range g.cfg.AllowPorts {
			ps = append(ps, strconv.Itoa(int(p)))
		}
		allowed = strings.Join(ps, ", ")
	}
	return fmt.Errorf("%w: port %d is not allowed (LektaBot connects to %s only)", ErrTargetRefused, port, allowed)
}

// describeLiteral words the refusal of an IP literal, showing how an
// unusual spelling was read: "0x7f.1 is 127.0.0.1, a loopback address".
func describeLiteral(rawHost string, h host, why string) string {
	shown := h.name
	if !strings.EqualFold(strings.Trim(rawHost, "[]"), strings.Trim(h.name, "[]")) {
		return rawHost + " is " + shown + ", " + why
	}
	return shown + " is " + why
}

// splitAuthority splits HOST[:PORT]; an IPv6 host keeps its brackets.
func splitAuthority(a string) (host, port string, hasPort bool, err error) {
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return "", "", false, fmt.Errorf("host %q has an unclosed [", a)
		}
		host, rest := a[:end+1], a[end+1:]
		if rest == "" {
			return host, "", false, nil
		}
		if rest[0] != ':' {
			return "", "", false, fmt.Errorf("unexpected %q after the IPv6 address", rest)
		}
		return host, rest[1:], true, nil
	}
	if i := strings.LastIndexByte(a, ':'); i >= 0 {
		host, port, hasPort = a[:i], a[i+1:], true
	} else {
		host = a
	}
	if strings.ContainsAny(host, ":[]") {
		return "", "", false, fmt.Errorf("host %q is malformed; IPv6 addresses go in brackets", host)
	}
	return host, port, hasPort, nil
}

func defaultPort(scheme string) uint16 {
	if scheme == "https" {
		return 443
	}
	return 80
}
