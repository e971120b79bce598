package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ParsePort parses a TCP port written in canonical decimal: 1 to 65535,
// no sign, no leading zero, no spaces. Browsers read "0080" and "+80"
// differently from Go, so those spellings are refused rather than guessed.
func ParsePort(s string) (uint16, error) {
	if s == "" {
		return 0, errors.New(`port "" is empty`)
	}
	var n uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' || len(s) > 5 {
			return 0, fmt.Errorf("port %q is not a decimal number from 1 to 65535", s)
		}
		n = n*10 + uint32(c-'0')
	}
	if s[0] == '0' && len(s) > 1 {
		return 0, fmt.Errorf("port %q has a leading zero", s)
	}
	if n == 0 || n > 65535 {
		return 0, fmt.Errorf("port %q is out of range 1-65535", s)
	}
	return uint16(n), nil
}

// ParseAllowAddr parses an --allow-addr value: an exact IP:PORT the guard
// may dial although the address is private or loopback ("127.0.0.1:8080",
// "[::1]:8080"). IPv4-mapped IPv6 addresses are stored as IPv4.
func ParseAllowAddr(s string) (netip.AddrPort, error) {
	ap, err := parseAddrPortValue(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("allowed address %q: %w", s, err)
	}
	return ap, nil
}

// ParseDenyPrefix parses a --deny value: a CIDR prefix ("10.20.0.0/16",
// "fd12:3456::/48") or a single IP ("168.63.129.16", which becomes a /32).
// Host bits are cleared; an IPv4-mapped prefix becomes its IPv4 prefix.
func ParseDenyPrefix(s string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		p, err = netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("deny prefix %q: not an IP prefix like 10.20.0.0/16", s)
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("deny prefix %q: not an IP address or prefix", s)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	p, err := checkDenyPrefix(p)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("deny prefix %q: %w", s, err)
	}
	return p, nil
}

// ParseResolveRule parses a --resolve value as curl does: HOST:PORT:ADDR,
// where ADDR is an IPv4 address, a bracketed IPv6 address, or either with
// its own :PORT ("shop.example:80:127.0.0.1:54321",
// "host:443:203.0.113.5", "host:443:[2001:db8::5]:8443"). HOST is a name
// (internationalised names are stored as punycode), never an IP address.
func ParseResolveRule(s string) (ResolveRule, error) {
	host, rest, ok1 := strings.Cut(s, ":")
	portStr, addrStr, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || host == "" || addrStr == "" {
		return ResolveRule{}, fmt.Errorf("resolve rule %q: want HOST:PORT:ADDR[:PORT]", s)
	}
	name, err := ruleHost(host)
	if err != nil {
		return ResolveRule{}, fmt.Errorf("resolve rule %q: %w", s, err)
	}
	port, err := ParsePort(portStr)
	if err != nil {
		return ResolveRule{}, fmt.Errorf("resolve rule %q: %w", s, err)
	}
	addr, err := parseRuleAddr(addrStr, port)
	if err != nil {
		return ResolveRule{}, fmt.Errorf("resolve rule %q: %w", s, err)
	}
	return ResolveRule{Host: name, Port: port, Addr: addr}, nil
}

// parseRuleAddr parses the ADDR part of a resolve rule; port is used when
// ADDR has none.
func parseRuleAddr(s string, port uint16) (netip.AddrPort, error) {
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		a, err := parseAddrValue(s[1 : len(s)-1])
		if err != nil {
			return netip.AddrPort{}, err
		}
		return netip.AddrPortFrom(a, port), nil
	}
	if !strings.HasPrefix(s, "[") && strings.Count(s, ":") != 1 {
		// A bare address: IPv4, or IPv6 as curl also accepts it.
		a, err := parseAddrValue(s)
		if err != nil {
			return netip.AddrPort{}, err
		}
		return netip.AddrPortFrom(a, port), nil
	}
	return parseAddrPortValue(s)
}

// parseAddrPortValue parses IPV4:PORT or [IPV6]:PORT with a canonical port.
func parseAddrPortValue(s string) (netip.AddrPort, error) {
	var addr, port string
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 || !strings.HasPrefix(s[end+1:], ":") {
			return netip.AddrPort{}, errors.New("want [IPV6]:PORT")
		}
		addr, port = s[1:end], s[end+2:]
	} else {
		i := strings.LastIndexByte(s, ':')
		if i < 0 {
			return netip.AddrPort{}, errors.New("want IP:PORT")
		}
		addr, port = s[:i], s[i+1:]
		if strings.Contains(addr, ":") {
			return netip.AddrPort{}, errors.New("put an IPv6 address in brackets: [::1]:8080")
		}
	}
	a, err := parseAddrValue(addr)
	if err != nil {
		return netip.AddrPort{}, err
	}
	p, err := ParsePort(port)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(a, p), nil
}

// parseAddrValue parses a plain IP address without zone, unmapping IPv4-mapped ones.
func parseAddrValue(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%q has a zone; zones are not supported", s)
	}
	return a.Unmap(), nil
}

// checkAllowAddr validates and unmaps an AllowAddrs entry.
func checkAllowAddr(ap netip.AddrPort) (netip.AddrPort, error) {
	a := ap.Addr()
	switch {
	case !a.IsValid():
		return ap, errors.New("allowed address is empty")
	case a.Zone() != "":
		return ap, fmt.Errorf("allowed address %s has a zone", ap)
	case ap.Port() == 0:
		return ap, fmt.Errorf("allowed address %s has no port", a)
	}
	return netip.AddrPortFrom(a.Unmap(), ap.Port()), nil
}

// checkDenyPrefix validates a DenyPrefixes entry and returns it masked, an
// IPv4-mapped prefix turned into its IPv4 prefix.
func checkDenyPrefix(p netip.Prefix) (netip.Prefix, error) {
	if !p.IsValid() {
		return p, errors.New("deny prefix is not valid")
	}
	if p.Addr().Zone() != "" {
		return p, fmt.Errorf("deny prefix %s has a zone", p)
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return p, fmt.Errorf("deny prefix %s is wider than the IPv4-mapped range", p)
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// ruleHost normalises the HOST of a resolve rule: a domain name in its
// ASCII form, never an IP address.
func ruleHost(host string) (string, error) {
	if strings.HasPrefix(host, "[") {
		return "", errors.New("HOST must be a name, not an IP address")
	}
	h, err := parseHost(host)
	if err != nil {
		return "", err
	}
	if h.addr.IsValid() {
		return "", errors.New("HOST must be a name, not an IP address")
	}
	return h.name, nil
}
