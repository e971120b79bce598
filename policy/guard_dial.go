package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
)

// DialContext dials addr after resolving it (Resolve rules first) and
// checking every candidate address; refused addresses wrap ErrBlockedAddress.
//
// Only tcp, tcp4 and tcp6 are dialled. A name is resolved on every call,
// so a rebinding DNS answer is checked like the first one. When any
// address of the answer is an exact AllowAddrs pair, only those pairs are
// dialled; otherwise, if any address is refused, the whole name is refused
// (a public name that also points inside is treated as hostile); otherwise
// up to MaxDialAttempts addresses are tried in the resolver's order. The
// socket's Control hook checks the address once more right before connect.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if g.guardian == nil {
		return nil, errors.New("policy: Guard used without NewGuard")
	}
	family, ok := dialFamilies[network]
	if !ok {
		return nil, fmt.Errorf("%w: network %q for %s (only tcp is dialled)", ErrBlockedAddress, network, addr)
	}
	hostStr, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("dial %s: bad port %q", addr, portStr)
	}
	cands, err := g.lookup(ctx, family, hostStr, uint16(port))
	if err != nil {
		var de *DialError
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	cands, err = g.admit(addr, cands)
	if err != nil {
		return nil, err
	}
	return g.dialFirst(ctx, addr, cands)
}

// dialFamilies maps a dial network to the resolver network.
var dialFamilies = map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}

// lookup turns host:port into candidate addresses: a Resolve rule, an IP
// literal, or the resolver's answer. Addresses come back unmapped, since an
// IPv4-mapped address is dialled as the IPv4 address it carries.
func (g *Guard) lookup(ctx context.Context, family, hostStr string, port uint16) ([]netip.AddrPort, error) {
	name := strings.TrimSuffix(lowerASCII(hostStr), ".")
	if ap, ok := g.rules[ruleKey{name, port}]; ok {
		return []netip.AddrPort{ap}, nil
	}
	if a, err := netip.ParseAddr(hostStr); err == nil {
		if a.Zone() != "" {
			return nil, fmt.Errorf("%w: zoned address %s", ErrBlockedAddress, a)
		}
		return []netip.AddrPort{netip.AddrPortFrom(a.Unmap(), port)}, nil
	}
	if name == "" {
		return nil, errors.New("empty host")
	}
	query := name
	if g.rooted {
		query += "."
	}
	ips, err := g.resolver.LookupNetIP(ctx, family, query)
	if err != nil {
		return nil, resolveError(net.JoinHostPort(hostStr, strconv.Itoa(int(port))), err)
	}
	out := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		ip = ip.Unmap()
		if family == "ip4" && !ip.Is4() || family == "ip6" && !ip.Is6() {
			continue
		}
		out = append(out, netip.AddrPortFrom(ip, port))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("resolve %s: no %s addresses", name, family)
	}
	return out, nil
}

// admit applies the all-or-nothing rule to a name's candidates: one
// refused address refuses the whole name, even beside an address the
// operator allowed (--allow-addr names an address, not every name that
// resolves to it among others).
func (g *Guard) admit(addr string, cands []netip.AddrPort) ([]netip.AddrPort, error) {
	for _, c := range cands {
		if g.addrAllowed(c) {
			continue
		}
		if err := g.CheckAddrPort(c); err != nil {
			if c.String() == addr {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %s resolves to %s", ErrBlockedAddress, addr, g.resolvedRefusal(c))
		}
	}
	if len(cands) > MaxDialAttempts {
		cands = cands[:MaxDialAttempts]
	}
	return cands, nil
}

// resolvedRefusal says why a resolved address is refused without naming
// it: refusals reach the person who submitted the URL (and, through the
// proxy, page script), and the addresses internal names resolve to, or the
// operator's denied ranges, are not theirs to learn.
func (g *Guard) resolvedRefusal(ap netip.AddrPort) string {
	ip := ap.Addr().Unmap()
	why := specialUse(ip)
	switch {
	case why != "" && !strings.ContainsAny(why, "0123456789"):
		return why
	case why != "" || g.addrRefusal(ip) != "":
		return "an address LektaBot does not connect to"
	}
	return fmt.Sprintf("a port that is not allowed (%d)", ap.Port())
}

// CheckAddrPort says whether the guard lets a connection go to ap: an exact
// AllowAddrs pair always may; otherwise the port must be 80, 443 or in
// AllowPorts, and the address must be neither special-use nor in
// DenyPrefixes. An IPv4-mapped address is judged as the IPv4 address it
// carries. The error wraps ErrBlockedAddress and names the address.
func (g *Guard) CheckAddrPort(ap netip.AddrPort) error {
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	if g.addrAllowed(ap) {
		return nil
	}
	if why := g.addrRefusal(ap.Addr()); why != "" {
		return fmt.Errorf("%w: %s is %s", ErrBlockedAddress, ap.Addr(), why)
	}
	if !g.portAllowed(ap.Port()) {
		return fmt.Errorf("%w: %s: port %d is not allowed", ErrBlockedAddress, ap, ap.Port())
	}
	return nil
}

// dialFirst connects to the first candidate that answers.
func (g *Guard) dialFirst(ctx context.Context, addr string, cands []netip.AddrPort) (net.Conn, error) {
	d := net.Dialer{Timeout: g.cfg.DialTimeout, Control: g.control}
	var errs []error
	for _, c := range cands {
		network := "tcp4"
		if c.Addr().Is6() {
			network = "tcp6"
		}
		conn, err := d.DialContext(ctx, network, c.String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil || errors.Is(err, ErrBlockedAddress) {
			break
		}
	}
	return nil, connectError(addr, errors.Join(errs...))
}

// control runs on every socket right before it connects: the guard's own
// check, then code.dny.dev/ssrf's, on the address the kernel will use.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read %q", ErrBlockedAddress, address)
	}
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("%w: network %q to %s", ErrBlockedAddress, network, address)
	}
	if err := g.CheckAddrPort(ap); err != nil {
		return err
	}
	if g.addrAllowed(netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())) {
		return nil
	}
	if err := g.guardian.Safe(network, address, nil); err != nil {
		return fmt.Errorf("%w: %w", ErrBlockedAddress, err)
	}
	return nil
}
