package policy

import (
	"encoding/binary"
	"net/netip"

	"code.dny.dev/ssrf"
)

// specialRange is a special-use prefix with the words a user reads when an
// address in it is refused.
type specialRange struct {
	prefix netip.Prefix
	what   string
	// embedded extracts the IPv4 address an IPv6 transition form carries,
	// nil when the range carries none.
	embedded func(netip.Addr) netip.Addr
}

// specialRanges are refused for targets and at dial time. The order matters:
// a more specific prefix comes before any prefix that contains it, so the
// message names the most precise reason. code.dny.dev/ssrf's lists back this
// table up in specialUse, so a range missing here is still refused.
var specialRanges = []specialRange{
	// IPv4: cloud metadata and platform endpoints first.
	{prefix: mustPrefix("169.254.169.254/32"), what: "the cloud metadata address"},
	{prefix: mustPrefix("169.254.170.2/32"), what: "the AWS container credentials address"},
	{prefix: mustPrefix("100.100.100.200/32"), what: "Alibaba Cloud's metadata address"},
	{prefix: mustPrefix("192.0.0.192/32"), what: "Oracle Cloud's metadata address"},
	{prefix: mustPrefix("168.63.129.16/32"), what: "Azure's platform service address (WireServer)"},
	{prefix: mustPrefix("0.0.0.0/32"), what: "the unspecified address (it reaches this machine)"},
	{prefix: mustPrefix("255.255.255.255/32"), what: "the broadcast address"},
	{prefix: mustPrefix("0.0.0.0/8"), what: `a "this network" address`},
	{prefix: mustPrefix("10.0.0.0/8"), what: "a private address"},
	{prefix: mustPrefix("100.64.0.0/10"), what: "a carrier-grade NAT (shared) address"},
	{prefix: mustPrefix("127.0.0.0/8"), what: "a loopback address"},
	{prefix: mustPrefix("169.254.0.0/16"), what: "a link-local address"},
	{prefix: mustPrefix("172.16.0.0/12"), what: "a private address"},
	{prefix: mustPrefix("192.0.0.0/24"), what: "an IETF protocol assignment address"},
	{prefix: mustPrefix("192.0.2.0/24"), what: "a documentation address"},
	{prefix: mustPrefix("192.88.99.0/24"), what: "a 6to4 relay anycast address"},
	{prefix: mustPrefix("192.168.0.0/16"), what: "a private address"},
	{prefix: mustPrefix("198.18.0.0/15"), what: "a benchmarking address"},
	{prefix: mustPrefix("198.51.100.0/24"), what: "a documentation address"},
	{prefix: mustPrefix("203.0.113.0/24"), what: "a documentation address"},
	{prefix: mustPrefix("224.0.0.0/4"), what: "a multicast address"},
	{prefix: mustPrefix("240.0.0.0/4"), what: "a reserved address"},

	// IPv6.
	{prefix: mustPrefix("::/128"), what: "the unspecified address (it reaches this machine)"},
	{prefix: mustPrefix("::1/128"), what: "a loopback address"},
	{prefix: mustPrefix("::ffff:0:0/96"), what: "an IPv4-mapped IPv6 address", embedded: last32},
	{prefix: mustPrefix("::/96"), what: "an IPv4-compatible IPv6 address", embedded: last32},
	{prefix: mustPrefix("64:ff9b::/96"), what: "a NAT64 address", embedded: last32},
	{prefix: mustPrefix("64:ff9b:1::/48"), what: "a local-use NAT64 address"},
	{prefix: mustPrefix("100::/64"), what: "a discard-only address"},
	{prefix: mustPrefix("2001::/32"), what: "a Teredo address", embedded: teredoClient},
	{prefix: mustPrefix("2001:db8::/32"), what: "a documentation address"},
	{prefix: mustPrefix("3fff::/20"), what: "a documentation address"},
	{prefix: mustPrefix("2002::/16"), what: "a 6to4 address", embedded: sixToFour},
	{prefix: mustPrefix("fd00:ec2::254/128"), what: "the AWS metadata address"},
	{prefix: mustPrefix("fc00::/7"), what: "a unique local (private) address"},
	{prefix: mustPrefix("fe80::/10"), what: "a link-local address"},
	{prefix: mustPrefix("fec0::/10"), what: "a site-local address"},
	{prefix: mustPrefix("ff00::/8"), what: "a multicast address"},
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// last32 is the IPv4 address in the low 32 bits of an IPv6 address.
func last32(ip netip.Addr) netip.Addr {
	b := ip.As16()
	return netip.AddrFrom4([4]byte(b[12:16]))
}

// sixToFour is the IPv4 address in bits 16–47 of a 6to4 address.
func sixToFour(ip netip.Addr) netip.Addr {
	b := ip.As16()
	return netip.AddrFrom4([4]byte(b[2:6]))
}

// teredoClient is the Teredo client's IPv4 address, stored inverted in the
// low 32 bits.
func teredoClient(ip netip.Addr) netip.Addr {
	b := ip.As16()
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], ^binary.BigEndian.Uint32(b[12:16]))
	return netip.AddrFrom4(v)
}

// specialUse says why ip is not an ordinary public address ("a loopback
// address"), or returns "" when it is one. An IPv4-mapped address is itself
// special; callers that dial unmap first, because the kernel then connects
// to the IPv4 address.
func specialUse(ip netip.Addr) string {
	ip = ip.WithZone("")
	for _, r := range specialRanges {
		if !r.prefix.Contains(ip) {
			continue
		}
		if r.embedded != nil {
			return r.what + " embedding " + r.embedded(ip).String()
		}
		return r.what
	}
	if ip.Is4() {
		for _, p := range ssrf.IPv4DeniedPrefixes {
			if p.Contains(ip) {
				return "a special-use address (" + p.String() + ")"
			}
		}
		return ""
	}
	if !ssrf.IPv6GlobalUnicast.Contains(ip) {
		return "outside the public IPv6 unicast range"
	}
	for _, p := range ssrf.IPv6DeniedPrefixes {
		if p.Contains(ip) {
			return "a special-use address (" + p.String() + ")"
		}
	}
	return ""
}

// addrRefusal says why the guard refuses ip (built-in special-use ranges,
// then the operator's DenyPrefixes), or "" when ip may be used.
func (g *Guard) addrRefusal(ip netip.Addr) string {
	if why := specialUse(ip); why != "" {
		return why
	}
	ip = ip.WithZone("")
	for _, p := range g.deny {
		if p.Contains(ip) {
			return "in the operator's denied range " + p.String()
		}
	}
	return ""
}

// portAllowed reports whether targets may use port on any public address.
func (g *Guard) portAllowed(port uint16) bool {
	if port == 80 || port == 443 {
		return true
	}
	for _, p := range g.cfg.AllowPorts {
		if p == port {
			return true
		}
	}
	return false
}

// addrAllowed reports whether ap is one of the exact AllowAddrs pairs.
func (g *Guard) addrAllowed(ap netip.AddrPort) bool {
	_, ok := g.allow[ap]
	return ok
}
