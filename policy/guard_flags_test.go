package policy

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestParsePort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want uint16 // 0: an error naming in
	}{
		{"80", 80}, {"1", 1}, {"8080", 8080}, {"65535", 65535},
		{"", 0}, {"0", 0}, {"00", 0}, {"0080", 0}, {"+80", 0}, {"-1", 0}, {"65536", 0},
		{"99999", 0}, {"123456", 0}, {" 80", 0}, {"80 ", 0}, {"8o", 0}, {"0x50", 0}, {"８０", 0},
	}
	for _, tc := range tests {
		got, err := ParsePort(tc.in)
		switch {
		case tc.want != 0 && (err != nil || got != tc.want):
			t.Errorf("ParsePort(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		case tc.want == 0 && err == nil:
			t.Errorf("ParsePort(%q) = %d, want an error", tc.in, got)
		case tc.want == 0 && !strings.Contains(err.Error(), `"`+tc.in+`"`):
			t.Errorf("ParsePort(%q) error %q does not name the value", tc.in, err)
		}
	}
}

func TestParseResolveRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want ResolveRule
		bad  bool
	}{
		{in: "shop.example:80:127.0.0.1:54321", want: ResolveRule{"shop.example", 80, netip.MustParseAddrPort("127.0.0.1:54321")}},
		{in: "host.example:443:203.0.113.5", want: ResolveRule{"host.example", 443, netip.MustParseAddrPort("203.0.113.5:443")}},
		{in: "Shop.Example.:80:[::1]", want: ResolveRule{"shop.example", 80, netip.MustParseAddrPort("[::1]:80")}},
		{in: "shop.example:443:[2001:db8::5]:8443", want: ResolveRule{"shop.example", 443, netip.MustParseAddrPort("[2001:db8::5]:8443")}},
		{in: "shop.example:443:2001:db8::5", want: ResolveRule{"shop.example", 443, netip.MustParseAddrPort("[2001:db8::5]:443")}},
		{in: "shop.example:80:[::ffff:127.0.0.1]:8080", want: ResolveRule{"shop.example", 80, netip.MustParseAddrPort("127.0.0.1:8080")}},
		{in: "bücher.example:80:192.0.2.1", want: ResolveRule{"xn--bcher-kva.example", 80, netip.MustParseAddrPort("192.0.2.1:80")}},
		{in: "intranet:80:10.0.0.5", want: ResolveRule{"intranet", 80, netip.MustParseAddrPort("10.0.0.5:80")}},
		{in: "", bad: true},
		{in: "shop.example", bad: true},
		{in: "shop.example:80", bad: true},
		{in: "shop.example:80:", bad: true},
		{in: ":80:127.0.0.1", bad: true},
		{in: "shop.example:0080:127.0.0.1", bad: true},
		{in: "shop.example:0:127.0.0.1", bad: true},
		{in: "shop.example:http:127.0.0.1", bad: true},
		{in: "shop.example:80:localhost", bad: true},
		{in: "shop.example:80:127.0.0.1:0", bad: true},
		{in: "shop.example:80:127.0.0.1:65536", bad: true},
		{in: "shop.example:80:[::1]:", bad: true},
		{in: "shop.example:80:[fe80::1%eth0]", bad: true},
		{in: "127.0.0.1:80:10.0.0.1", bad: true},
		{in: "0x7f.1:80:10.0.0.1", bad: true},
		{in: "[::1]:80:10.0.0.1", bad: true},
		{in: "bad*host:80:10.0.0.1", bad: true},
	}
	for _, tc := range tests {
		got, err := ParseResolveRule(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseResolveRule(%q) = %+v, want an error", tc.in, got)
			} else if !strings.Contains(err.Error(), `"`+tc.in+`"`) {
				t.Errorf("ParseResolveRule(%q) error %q does not name the value", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseResolveRule(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseAllowAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string // want "": an error naming in
	}{
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"[::1]:3000", "[::1]:3000"},
		{"[::ffff:127.0.0.1]:8080", "127.0.0.1:8080"},
		{"192.168.1.10:80", "192.168.1.10:80"},
		{"127.0.0.1", ""}, {"127.0.0.1:", ""}, {"127.0.0.1:0", ""}, {"127.0.0.1:08080", ""},
		{"::1:8080", ""}, {"[::1]", ""}, {"localhost:8080", ""}, {"[fe80::1%eth0]:80", ""}, {"", ""},
	}
	for _, tc := range tests {
		got, err := ParseAllowAddr(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseAllowAddr(%q) = %v, want an error", tc.in, got)
			} else if !strings.Contains(err.Error(), `"`+tc.in+`"`) {
				t.Errorf("ParseAllowAddr(%q) error %q does not name the value", tc.in, err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseAllowAddr(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestParseDenyPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string // want "": an error naming in
	}{
		{"10.20.0.0/16", "10.20.0.0/16"},
		{"10.20.30.40/16", "10.20.0.0/16"},
		{"168.63.129.16", "168.63.129.16/32"},
		{"fd12:3456::/48", "fd12:3456::/48"},
		{"2001:db8::1", "2001:db8::1/128"},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"10.0.0.0/33", ""}, {"10.0.0/8", ""}, {"example.com", ""}, {"", ""}, {"fe80::1%eth0", ""}, {"::ffff:0:0/80", ""},
	}
	for _, tc := range tests {
		got, err := ParseDenyPrefix(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseDenyPrefix(%q) = %v, want an error", tc.in, got)
			} else if !strings.Contains(err.Error(), `"`+tc.in+`"`) {
				t.Errorf("ParseDenyPrefix(%q) error %q does not name the value", tc.in, err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseDenyPrefix(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestNewGuardChecksConfig(t *testing.T) {
	t.Parallel()
	ap := netip.MustParseAddrPort
	bad := []struct {
		name string
		cfg  GuardConfig
	}{
		{"negative timeout", GuardConfig{DialTimeout: -time.Second}},
		{"port 0", GuardConfig{AllowPorts: []uint16{0}}},
		{"allow addr without port", GuardConfig{AllowAddrs: []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 0)}}},
		{"allow addr empty", GuardConfig{AllowAddrs: []netip.AddrPort{{}}}},
		{"deny prefix empty", GuardConfig{DenyPrefixes: []netip.Prefix{{}}}},
		{"rule without host", GuardConfig{Resolve: []ResolveRule{{Port: 80, Addr: ap("127.0.0.1:80")}}}},
		{"rule on IP", GuardConfig{Resolve: []ResolveRule{{Host: "127.0.0.1", Port: 80, Addr: ap("127.0.0.1:80")}}}},
		{"rule without port", GuardConfig{Resolve: []ResolveRule{{Host: "a.example", Addr: ap("127.0.0.1:80")}}}},
		{"rule without addr", GuardConfig{Resolve: []ResolveRule{{Host: "a.example", Port: 80}}}},
		{"duplicate rules", GuardConfig{Resolve: []ResolveRule{
			{Host: "a.example", Port: 80, Addr: ap("127.0.0.1:80")},
			{Host: "A.example.", Port: 80, Addr: ap("127.0.0.2:80")},
		}}},
	}
	for _, tc := range bad {
		if _, err := NewGuard(tc.cfg); err == nil {
			t.Errorf("%s: NewGuard accepted %+v", tc.name, tc.cfg)
		}
	}

	rules := []ResolveRule{{Host: "Bücher.Example.", Port: 80, Addr: netip.AddrPortFrom(netip.MustParseAddr("::ffff:127.0.0.1"), 0)}}
	g, err := NewGuard(GuardConfig{
		Resolve:      rules,
		AllowAddrs:   []netip.AddrPort{ap("[::ffff:127.0.0.1]:8080")},
		DenyPrefixes: []netip.Prefix{netip.MustParsePrefix("10.20.30.40/16")},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := g.Config()
	if got, want := c.Resolve[0], (ResolveRule{"xn--bcher-kva.example", 80, ap("127.0.0.1:80")}); got != want {
		t.Errorf("Config().Resolve[0] = %+v, want %+v", got, want)
	}
	if rules[0].Host != "Bücher.Example." {
		t.Errorf("NewGuard modified the caller's rules: %+v", rules[0])
	}
	if got := c.AllowAddrs[0].String(); got != "127.0.0.1:8080" {
		t.Errorf("Config().AllowAddrs[0] = %s, want 127.0.0.1:8080", got)
	}
	if got := c.DenyPrefixes[0].String(); got != "10.20.0.0/16" {
		t.Errorf("Config().DenyPrefixes[0] = %s, want 10.20.0.0/16", got)
	}
	if c.DialTimeout != DefaultDialTimeout {
		t.Errorf("Config().DialTimeout = %v, want %v", c.DialTimeout, DefaultDialTimeout)
	}
}
