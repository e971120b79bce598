package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// hostIDNA maps hosts the way browsers do (UTS #46, non-transitional, as
// the WHATWG URL standard asks): full-width and other compatibility forms
// fold to ASCII ("１２７．０．０．１" is 127.0.0.1, "ⓛⓞⓒⓐⓛⓗⓞⓢⓣ" is
// localhost), Unicode labels become punycode. Hyphen positions and STD3
// are not checked, as in browsers (labels such as "r3---sn-abc" and "_dmarc"
// exist); hostChars below then keeps only DNS-safe ASCII.
var hostIDNA = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
)

// host is a parsed URL host.
type host struct {
	// name is the ASCII host without a trailing dot: a lower-case domain,
	// dotted-decimal IPv4, or bracketed canonical IPv6.
	name string
	// addr is the address of an IP literal, the zero Addr for a domain.
	addr netip.Addr
}

// parseHost parses a URL host (no port) as a browser would: IPv6 in
// brackets, IDNA mapping, then any host whose last label is a number is an
// IPv4 literal in one of the WHATWG spellings. It refuses nothing on policy
// grounds; errors describe malformed input and wrap no sentinel.
func parseHost(raw string) (host, error) {
	if raw == "" {
		return host{}, errors.New("the host is empty")
	}
	if strings.IndexByte(raw, '%') >= 0 {
		return host{}, fmt.Errorf("host %q contains %%: percent-encoded hosts and IPv6 zone ids are not accepted", raw)
	}
	if raw[0] == '[' {
		return parseIPv6Literal(raw)
	}
	if !utf8.ValidString(raw) {
		return host{}, fmt.Errorf("host %q is not valid UTF-8", raw)
	}
	name, err := domainToASCII(raw)
	if err != nil {
		return host{}, err
	}
	if endsInNumber(name) {
		a, ok := parseWHATWGIPv4(name)
		if !ok {
			return host{}, fmt.Errorf("host %q ends in a number but is not a valid IPv4 address", raw)
		}
		return host{name: a.String(), addr: a}, nil
	}
	return host{name: name}, nil
}

// CanonicalHost is a URL host (no port, not percent-encoded) as a browser
// serialises it: lower-case ASCII after the UTS #46 mapping, an IPv4
// literal in any WHATWG spelling as dotted decimal, IPv6 in brackets in its
// canonical form, and no trailing dot. It refuses nothing on policy
// grounds; an error means no browser would read raw as a host.
func CanonicalHost(raw string) (string, error) {
	h, err := parseHost(raw)
	if err != nil {
		return "", err
	}
	return h.name, nil
}

// parseIPv6Literal parses "[v6]"; IPv4 in brackets and zones are malformed.
func parseIPv6Literal(raw string) (host, error) {
	if len(raw) < 2 || raw[len(raw)-1] != ']' {
		return host{}, fmt.Errorf("host %q has an unclosed [", raw)
	}
	a, err := netip.ParseAddr(raw[1 : len(raw)-1])
	if err != nil || !a.Is6() || a.Zone() != "" {
		return host{}, fmt.Errorf("host %q is not a valid IPv6 address", raw)
	}
	return host{name: "[" + a.String() + "]", addr: a}, nil
}

// domainToASCII maps a domain to lower-case ASCII, drops one trailing dot
// and checks characters and DNS lengths.
func domainToASCII(raw string) (string, error) {
	name := raw
	if needsIDNA(raw) {
		var err error
		name, err = hostIDNA.ToASCII(raw)
		if err != nil {
			return "", fmt.Errorf("host %q is not a valid domain name: %v", raw, err)
		}
	} else {
		name = lowerASCII(raw)
	}
	name = strings.TrimSuffix(name, ".")
	if name == "" {
		return "", fmt.Errorf("host %q is empty once mapped", raw)
	}
	if len(name) > 253 {
		return "", fmt.Errorf("host %q is longer than 253 bytes", raw)
	}
	label := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '.':
			if label == 0 {
				return "", fmt.Errorf("host %q has an empty label", raw)
			}
			label = 0
			continue
		case !hostChar(c):
			return "", fmt.Errorf("host %q contains %q, which is not allowed in a domain name", raw, c)
		}
		label++
		if label > 63 {
			return "", fmt.Errorf("host %q has a label longer than 63 bytes", raw)
		}
	}
	if label == 0 {
		return "", fmt.Errorf("host %q has an empty label", raw)
	}
	return name, nil
}

// hostChar reports whether c may appear in a mapped domain: DNS letters,
// digits and hyphen, plus the underscore browsers accept.
func hostChar(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// needsIDNA reports whether raw needs the UTS #46 mapping: it has non-ASCII
// bytes or a punycode label to validate. Plain ASCII only needs lower-casing.
func needsIDNA(raw string) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] >= utf8.RuneSelf {
			return true
		}
	}
	l := lowerASCII(raw)
	return strings.HasPrefix(l, "xn--") || strings.Contains(l, ".xn--")
}

// endsInNumber is the WHATWG "ends in a number" test: a host whose last
// label is all digits, or parses as a hex or octal number ("0x", "0x7f"),
// is an IPv4 address to a browser. name has no trailing dot.
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" {
		return false
	}
	if allDigits(last) {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseIPv4Number parses one part of a WHATWG IPv4 host: decimal, "0x"
// hex or leading-zero octal. Values above 2^32 saturate; they are never
// valid anyway.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d, ok := digitValue(s[i])
		if !ok || d >= base {
			return 0, false
		}
		if n <= 1<<32 {
			n = n*base + d
		}
	}
	return n, true
}

func digitValue(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

// parseWHATWGIPv4 parses the 1 to 4 dotted numbers of a WHATWG IPv4 host
// ("127.1", "0x7f.1", "0177.0.0.1", "2130706433"); the last number fills
// the remaining bytes.
func parseWHATWGIPv4(name string) (netip.Addr, bool) {
	parts := strings.Split(name, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// internalTLDs are last labels that never resolve on the public internet,
// with why. Names under them reach only local or private networks.
var internalTLDs = map[string]string{
	"localhost":   "a name for this machine",
	"local":       "a multicast-DNS (.local) name that only resolves on the local network",
	"internal":    "an .internal name, reserved for private networks",
	"arpa":        "an .arpa name, used for reverse DNS and home networks, not for public sites",
	"localdomain": "a .localdomain name that only resolves on this machine or its network",
	"lan":         "a .lan name, which is not a public top-level domain",
	"home":        "a .home name, which is not a public top-level domain",
	"corp":        "a .corp name, which is not a public top-level domain",
	"mail":        "a .mail name, which is not a public top-level domain",
	"intranet":    "an .intranet name, which is not a public top-level domain",
	"private":     "a .private name, which is not a public top-level domain",
	"invalid":     "an .invalid name, which never resolves",
	"onion":       "an .onion name, reachable only through Tor",
	"alt":         "an .alt name, outside the DNS",
}

// internalName says why a mapped domain can only be internal, or "".
func internalName(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		if name == "localhost" {
			return internalTLDs[name]
		}
		return "a single-label name, which only resolves inside a local network"
	}
	return internalTLDs[name[i+1:]]
}
