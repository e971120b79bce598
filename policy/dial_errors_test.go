package policy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"testing"
)

// internalDetail matches what a dial error must never show: an IP address
// (with or without a port), a DNS server, a path.
var internalDetail = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+|\[?[0-9a-f]*:[0-9a-f:]+\]?:\d+|:53\b|\bon \S+:\d+|/etc/|/proc/`)

// TestDialErrorsNameNoInternals: what goes wrong while dialling is said in
// plain words, without the resolver's address, the address a name resolved
// to, or any other detail of our side.
func TestDialErrorsNameNoInternals(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := netip.MustParseAddrPort(closed.Addr().String())
	closed.Close() // nothing listens there now: connections are refused
	dnsFails := func(e *net.DNSError) Resolver {
		return resolverFunc(func(context.Context, string, string) ([]netip.Addr, error) { return nil, e })
	}
	tests := []struct {
		name   string
		cfg    GuardConfig
		addr   string
		reason string
	}{
		{"no such host", GuardConfig{Resolver: dnsFails(&net.DNSError{Err: "no such host", Name: "localhost.", Server: "10.9.8.7:53", IsNotFound: true})},
			"localhost:80", ReasonNoSuchHost},
		{"resolver timeout", GuardConfig{Resolver: dnsFails(&net.DNSError{Err: "i/o timeout", Name: "slow.example.", Server: "10.9.8.7:53", IsTimeout: true})},
			"slow.example:80", ReasonDNSTimeout},
		{"resolver failure", GuardConfig{Resolver: dnsFails(&net.DNSError{Err: "server misbehaving", Name: "bad.example.", Server: "[fd00::53]:53"})},
			"bad.example:443", ReasonDNSFailed},
		{"connection refused", GuardConfig{
			Resolve:    []ResolveRule{{Host: "shop.example", Port: 80, Addr: closedAddr}},
			AllowAddrs: []netip.AddrPort{closedAddr},
		}, "shop.example:80", ReasonRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := mustGuard(t, tc.cfg)
			_, err := g.DialContext(context.Background(), "tcp", tc.addr)
			var de *DialError
			if !errors.As(err, &de) || de.Reason != tc.reason {
				t.Fatalf("dial %s: %v, want a DialError saying %q", tc.addr, err, tc.reason)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.addr) {
				t.Errorf("%q does not name the address asked for, %s", msg, tc.addr)
			}
			if m := internalDetail.FindString(msg); m != "" {
				t.Errorf("%q shows %q", msg, m)
			}
		})
	}
}
