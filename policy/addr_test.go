package policy

import (
	"net/netip"
	"testing"

	"code.dny.dev/ssrf"
)

func TestSpecialUseCoversSSRFLists(t *testing.T) {
	t.Parallel()
	var prefixes []netip.Prefix
	prefixes = append(prefixes, ssrf.IPv4DeniedPrefixes...)
	prefixes = append(prefixes, ssrf.IPv6DeniedPrefixes...)
	prefixes = append(prefixes, ssrf.IPv6NAT64Prefix)
	for _, r := range specialRanges {
		prefixes = append(prefixes, r.prefix)
	}
	for _, p := range prefixes {
		first := p.Masked().Addr()
		last := lastAddr(p)
		for _, a := range []netip.Addr{first, last} {
			if specialUse(a) == "" {
				t.Errorf("specialUse(%s) = \"\", want it refused (in %s)", a, p)
			}
		}
	}
}

func TestSpecialUseAllowsPublicAddresses(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"1.1.1.1", "8.8.8.8", "93.184.216.34", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
		"192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255", "169.253.255.255",
		"2606:4700:4700::1111", "2a00:1450:4001::1", "2001:4860:4860::8888",
	} {
		if why := specialUse(netip.MustParseAddr(s)); why != "" {
			t.Errorf("specialUse(%s) = %q, want a public address", s, why)
		}
	}
}

// lastAddr is the highest address in p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
