package policy

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// noDNS is a Resolver that fails the test when asked anything: target
// validation must never touch the network.
type noDNS struct{ tb testing.TB }

func (r noDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.tb.Errorf("resolver asked for %q during target validation", host)
	return nil, errors.New("no DNS in this test")
}

// mustGuard builds a Guard for cfg, with a resolver that fails the test
// when cfg has none.
func mustGuard(tb testing.TB, cfg GuardConfig) *Guard {
	tb.Helper()
	if cfg.Resolver == nil {
		cfg.Resolver = noDNS{tb}
	}
	g, err := NewGuard(cfg)
	if err != nil {
		tb.Fatalf("NewGuard: %v", err)
	}
	return g
}

// hostileTargets are refused by ParseTarget before any network activity.
// want is the sentinel the error must wrap; msg a fragment of its text.
var hostileTargets = []struct {
	name, raw string
	want      error
	msg       string
}{
	// Not an http(s) URL.
	{"empty", "", ErrInvalidURL, "empty"},
	{"no scheme", "example.com/page", ErrInvalidURL, "no scheme"},
	{"scheme-relative", "//example.com/", ErrInvalidURL, "no scheme"},
	{"file", "file:///etc/passwd", ErrInvalidURL, `scheme "file"`},
	{"ftp", "ftp://example.com/", ErrInvalidURL, `scheme "ftp"`},
	{"gopher", "gopher://127.0.0.1:6379/_INFO", ErrInvalidURL, `scheme "gopher"`},
	{"data", "data:text/html,<b>x</b>", ErrInvalidURL, `scheme "data"`},
	{"javascript", "javascript:alert(1)", ErrInvalidURL, `scheme "javascript"`},
	{"chrome", "chrome://settings/", ErrInvalidURL, `scheme "chrome"`},
	{"view-source", "view-source:http://example.com/", ErrInvalidURL, `scheme "view-source"`},
	{"websocket", "ws://example.com/socket", ErrInvalidURL, `scheme "ws"`},
	{"no slashes", "http:example.com", ErrInvalidURL, "followed by //"},
	{"one slash", "http:/example.com/", ErrInvalidURL, "followed by //"},

	// Bytes browsers and Go read differently.
	{"backslash after scheme", `http:/\127.0.0.1/`, ErrInvalidURL, "backslash"},
	{"backslash authority", `http://example.com\@127.0.0.1/`, ErrInvalidURL, "backslash"},
	{"backslash in path", `https://example.com/a\b`, ErrInvalidURL, "backslash"},
	{"tab in host", "http://127.0.0.1\t.example.com/", ErrInvalidURL, "control character 0x09"},
	{"space in host", "http://exa mple.com/", ErrInvalidURL, "space"},
	{"leading space", " http://example.com/", ErrInvalidURL, "space"},
	{"NUL", "http://example.com/\x00", ErrInvalidURL, "control character"},
	{"DEL", "http://example.com/\x7f", ErrInvalidURL, "control character 0x7f"},
	{"CRLF injection", "http://example.com/\r\nHost: 127.0.0.1", ErrInvalidURL, "control character 0x0d"},
	{"invalid UTF-8", "http://\xff.example.com/", ErrInvalidURL, "UTF-8"},
	{"too long", "https://example.com/" + strings.Repeat("a", MaxURLBytes), ErrInvalidURL, "more than 2048"},

	// Malformed hosts.
	{"percent host", "http://%31%32%37.0.0.1/", ErrInvalidURL, "contains %"},
	{"percent in name", "http://exa%6dple.com/", ErrInvalidURL, "contains %"},
	{"IPv6 zone", "http://[fe80::1%25eth0]/", ErrInvalidURL, "contains %"},
	{"IPv6 raw zone", "http://[::1%lo]/", ErrInvalidURL, "contains %"},
	{"empty host", "http:///example.com/", ErrInvalidURL, "host is empty"},
	{"port only", "http://:80/", ErrInvalidURL, "host is empty"},
	{"bad hex IPv4", "http://0x7g.1/", ErrInvalidURL, "not a valid IPv4"},
	{"five parts", "http://1.2.3.4.5/", ErrInvalidURL, "not a valid IPv4"},
	{"octet too big", "http://256.256.256.256/", ErrInvalidURL, "not a valid IPv4"},
	{"number overflow", "http://4294967296/", ErrInvalidURL, "not a valid IPv4"},
	{"bad octal", "http://09.1/", ErrInvalidURL, "not a valid IPv4"},
	{"name ending in number", "http://example.123/", ErrInvalidURL, "not a valid IPv4"},
	{"IPv4 in brackets", "http://[127.0.0.1]/", ErrInvalidURL, "not a valid IPv6"},
	{"unclosed bracket", "http://[::1/", ErrInvalidURL, "unclosed"},
	{"IPv6 without brackets", "http://::1/", ErrInvalidURL, "brackets"},
	{"empty label", "http://a..example.com/", ErrInvalidURL, "empty label"},
	{"leading dot", "http://.example.com/", ErrInvalidURL, "empty label"},
	{"two trailing dots", "http://example.com../", ErrInvalidURL, "empty label"},
	{"loopback two trailing dots", "http://127.0.0.1../", ErrInvalidURL, "empty label"},
	{"star in name", "http://exa*mple.com/", ErrInvalidURL, "not allowed"},
	{"full-width solidus", "http://evil.com／x.example/", ErrInvalidURL, "not allowed"},
	{"full-width colon", "http://127.0.0.1：80/", ErrInvalidURL, "not allowed"},
	{"bad punycode", "http://xn--a.example/", ErrInvalidURL, "not a valid domain"},
	{"label too long", "http://" + strings.Repeat("a", 64) + ".example/", ErrInvalidURL, "longer than 63"},
	{"bad path escape", "http://example.com/%zz", ErrInvalidURL, "escape"},

	// Non-canonical ports.
	{"port leading zero", "http://example.com:0080/", ErrInvalidURL, "leading zero"},
	{"port plus", "http://example.com:+80/", ErrInvalidURL, `"+80"`},
	{"port zero", "http://example.com:0/", ErrInvalidURL, "out of range"},
	{"port too big", "http://example.com:65536/", ErrInvalidURL, "out of range"},
	{"port empty", "http://example.com:/", ErrInvalidURL, "empty"},
	{"port letters", "http://example.com:8o/", ErrInvalidURL, `"8o"`},
	{"two ports", "http://example.com:80:80/", ErrInvalidURL, "brackets"},

	// Credentials.
	{"userinfo", "http://user:pass@example.com/", ErrTargetRefused, "credentials"},
	{"empty userinfo", "http://@example.com/", ErrTargetRefused, "credentials"},
	{"userinfo hiding host", "http://example.com@127.0.0.1/", ErrTargetRefused, "credentials"},

	// Loopback and this machine, every spelling.
	{"loopback", "http://127.0.0.1/", ErrTargetRefused, "127.0.0.1 is a loopback address"},
	{"loopback other", "http://127.8.9.10/", ErrTargetRefused, "loopback"},
	{"loopback short", "http://127.1/", ErrTargetRefused, "127.1 is 127.0.0.1, a loopback"},
	{"loopback decimal", "http://2130706433/", ErrTargetRefused, "2130706433 is 127.0.0.1"},
	{"loopback hex", "http://0x7f000001/", ErrTargetRefused, "loopback"},
	{"loopback hex parts", "http://0x7f.1/", ErrTargetRefused, "0x7f.1 is 127.0.0.1"},
	{"loopback HEX", "http://0X7F.0X0.0X0.0X1/", ErrTargetRefused, "loopback"},
	{"loopback octal", "http://0177.0.0.1/", ErrTargetRefused, "loopback"},
	{"loopback octal short", "http://0177.1/", ErrTargetRefused, "loopback"},
	{"loopback mixed", "http://0x7f.0.01/", ErrTargetRefused, "loopback"},
	{"loopback trailing dot", "http://127.0.0.1./", ErrTargetRefused, "loopback"},
	{"loopback full-width", "http://１２７．０．０．１/", ErrTargetRefused, "is 127.0.0.1, a loopback"},
	{"loopback circled", "http://①②⑦.⓪.⓪.①/", ErrTargetRefused, "loopback"},
	{"loopback ideographic dots", "http://127。0。0。1/", ErrTargetRefused, "loopback"},
	{"digit full stop (disallowed in UTS 46 v16)", "http://127.0.0.⒈/", ErrInvalidURL, "not a valid domain"},
	{"loopback full-width hex", "http://０ｘ７ｆ.１/", ErrTargetRefused, "is 127.0.0.1, a loopback"},
	{"loopback with port", "http://127.0.0.1:8080/", ErrTargetRefused, "loopback"},
	{"unspecified zero", "http://0/", ErrTargetRefused, "unspecified"},
	{"unspecified dotted", "http://0.0.0.0/", ErrTargetRefused, "unspecified"},
	{"unspecified hex", "http://0x0/", ErrTargetRefused, "unspecified"},
	{"this network", "http://0.1.2.3/", ErrTargetRefused, "this network"},
	{"localhost", "http://localhost/", ErrTargetRefused, "localhost"},
	{"localhost upper", "http://LOCALHOST:80/", ErrTargetRefused, "localhost"},
	{"localhost dot", "http://localhost./", ErrTargetRefused, "localhost"},
	{"localhost circled", "http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", ErrTargetRefused, "localhost"},
	{"localhost full-width", "https://ｌｏｃａｌｈｏｓｔ/", ErrTargetRefused, "localhost"},
	{"sub.localhost", "http://app.localhost/", ErrTargetRefused, "localhost"},

	// Private, shared, link-local and cloud metadata.
	{"private 10", "http://10.0.0.1/", ErrTargetRefused, "private"},
	{"private 10 short", "http://10.1/", ErrTargetRefused, "10.1 is 10.0.0.1, a private"},
	{"private 10 octal", "http://012.0.0.1/", ErrTargetRefused, "private"},
	{"private 172", "http://172.16.5.4/", ErrTargetRefused, "private"},
	{"private 192.168", "http://192.168.1.1/", ErrTargetRefused, "private"},
	{"private 192.168 decimal", "http://3232235777/", ErrTargetRefused, "192.168.1.1, a private"},
	{"private 192.168 hex", "http://0xc0.0xa8.1.1/", ErrTargetRefused, "private"},
	{"metadata", "http://169.254.169.254/latest/meta-data/", ErrTargetRefused, "cloud metadata"},
	{"metadata hex", "http://0xa9fea9fe/", ErrTargetRefused, "cloud metadata"},
	{"metadata decimal", "http://2852039166/", ErrTargetRefused, "cloud metadata"},
	{"metadata short", "http://169.254.43518/", ErrTargetRefused, "cloud metadata"},
	{"metadata ECS", "http://169.254.170.2/v2/credentials", ErrTargetRefused, "credentials"},
	{"link-local", "http://169.254.1.1/", ErrTargetRefused, "link-local"},
	{"metadata Alibaba", "http://100.100.100.200/", ErrTargetRefused, "Alibaba"},
	{"metadata Azure", "http://168.63.129.16/", ErrTargetRefused, "Azure"},
	{"metadata Oracle", "http://192.0.0.192/", ErrTargetRefused, "Oracle"},
	{"CGNAT", "http://100.64.0.1/", ErrTargetRefused, "carrier-grade NAT"},
	{"benchmark", "http://198.18.0.1/", ErrTargetRefused, "benchmarking"},
	{"documentation", "http://203.0.113.7/", ErrTargetRefused, "documentation"},
	{"broadcast", "http://255.255.255.255/", ErrTargetRefused, "broadcast"},
	{"broadcast decimal", "http://4294967295/", ErrTargetRefused, "broadcast"},
	{"multicast", "http://224.0.0.1/", ErrTargetRefused, "multicast"},
	{"reserved", "http://240.0.0.1/", ErrTargetRefused, "reserved"},
	{"AS112", "http://192.31.196.1/", ErrTargetRefused, "special-use"},

	// IPv6 literals.
	{"v6 loopback", "http://[::1]/", ErrTargetRefused, "loopback"},
	{"v6 loopback long", "http://[0:0:0:0:0:0:0:1]/", ErrTargetRefused, "loopback"},
	{"v6 unspecified", "http://[::]/", ErrTargetRefused, "unspecified"},
	{"v6 mapped dotted", "http://[::ffff:127.0.0.1]/", ErrTargetRefused, "IPv4-mapped IPv6 address embedding 127.0.0.1"},
	{"v6 mapped hex", "http://[::ffff:7f00:1]/", ErrTargetRefused, "IPv4-mapped"},
	{"v6 mapped public", "http://[::ffff:8.8.8.8]/", ErrTargetRefused, "IPv4-mapped"},
	{"v6 compatible", "http://[::127.0.0.1]/", ErrTargetRefused, "IPv4-compatible"},
	{"v6 NAT64", "http://[64:ff9b::127.0.0.1]/", ErrTargetRefused, "NAT64 address embedding 127.0.0.1"},
	{"v6 NAT64 local", "http://[64:ff9b:1::a00:1]/", ErrTargetRefused, "local-use NAT64"},
	{"v6 6to4", "http://[2002:7f00:1::1]/", ErrTargetRefused, "6to4 address embedding 127.0.0.1"},
	{"v6 Teredo", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", ErrTargetRefused, "Teredo address embedding 127.0.0.1"},
	{"v6 documentation", "http://[2001:db8::1]/", ErrTargetRefused, "documentation"},
	{"v6 ULA", "http://[fc00::1]/", ErrTargetRefused, "unique local"},
	{"v6 ULA fd", "http://[FD12:3456::1]/", ErrTargetRefused, "unique local"},
	{"v6 AWS metadata", "http://[fd00:ec2::254]/", ErrTargetRefused, "AWS metadata"},
	{"v6 link-local", "http://[fe80::1]/", ErrTargetRefused, "link-local"},
	{"v6 site-local", "http://[fec0::1]/", ErrTargetRefused, "site-local"},
	{"v6 multicast", "http://[ff02::1]/", ErrTargetRefused, "multicast"},
	{"v6 discard", "http://[100::1]/", ErrTargetRefused, "discard"},

	// Names that only resolve inside.
	{"single label", "http://intranet/", ErrTargetRefused, "single-label"},
	{"single label metadata", "http://metadata/computeMetadata/v1/", ErrTargetRefused, "single-label"},
	{"single label dot", "http://router./", ErrTargetRefused, "single-label"},
	{"GCP metadata", "http://metadata.google.internal/", ErrTargetRefused, ".internal"},
	{"EC2 internal", "http://ip-10-0-0-1.ec2.internal/", ErrTargetRefused, ".internal"},
	{"mDNS", "http://printer.local/", ErrTargetRefused, ".local"},
	{"k8s cluster", "http://api.default.svc.cluster.local/", ErrTargetRefused, ".local"},
	{"home.arpa", "http://router.home.arpa/", ErrTargetRefused, ".arpa"},
	{"reverse DNS", "http://1.0.0.127.in-addr.arpa/", ErrTargetRefused, ".arpa"},
	{"localdomain", "http://box.localdomain/", ErrTargetRefused, ".localdomain"},
	{"lan", "http://nas.lan/", ErrTargetRefused, ".lan"},
	{"corp", "http://wiki.corp/", ErrTargetRefused, ".corp"},
	{"onion", "http://abcdefghijklmnop.onion/", ErrTargetRefused, "Tor"},
	{"invalid TLD", "http://example.invalid/", ErrTargetRefused, "never resolves"},
	{"internal upper", "https://VAULT.INTERNAL./", ErrTargetRefused, ".internal"},

	// Ports.
	{"port 8080", "http://example.com:8080/", ErrTargetRefused, "port 8080 is not allowed"},
	{"port ssh", "https://example.com:22/", ErrTargetRefused, "port 22"},
	{"port redis", "http://example.com:6379/", ErrTargetRefused, "port 6379"},
	{"port smtp on public IP", "http://8.8.8.8:25/", ErrTargetRefused, "port 25"},
	{"port on v6", "http://[2606:4700:4700::1111]:8443/", ErrTargetRefused, "port 8443"},
}

func TestParseTargetRefusesHostileInput(t *testing.T) {
	t.Parallel()
	if n := len(hostileTargets); n < 60 {
		t.Fatalf("only %d hostile inputs, want at least 60", n)
	}
	g := mustGuard(t, GuardConfig{})
	for _, tc := range hostileTargets {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, err := g.ParseTarget(tc.raw)
			if err == nil {
				t.Fatalf("ParseTarget(%q) = %s, want an error wrapping %v", tc.raw, u, tc.want)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("ParseTarget(%q) error %q does not wrap %v", tc.raw, err, tc.want)
			}
			other := ErrTargetRefused
			if tc.want == ErrTargetRefused {
				other = ErrInvalidURL
			}
			if errors.Is(err, other) {
				t.Errorf("ParseTarget(%q) error %q wraps both classes", tc.raw, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("ParseTarget(%q) error %q does not say %q", tc.raw, err, tc.msg)
			}
		})
	}
}

func TestParseTargetNormalises(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, GuardConfig{})
	tests := []struct{ name, raw, want string }{
		{"lower-case scheme and host", "HTTPS://WWW.Example.COM/Path/Is/Kept", "https://www.example.com/Path/Is/Kept"},
		{"empty path", "http://example.com", "http://example.com/"},
		{"query without path", "http://example.com?x=1", "http://example.com/?x=1"},
		{"default http port", "http://example.com:80/a", "http://example.com/a"},
		{"default https port", "https://example.com:443/a", "https://example.com/a"},
		{"443 on http kept", "http://example.com:443/", "http://example.com:443/"},
		{"80 on https kept", "https://example.com:80/", "https://example.com:80/"},
		{"fragment dropped", "https://example.com/a?b=1#section-2", "https://example.com/a?b=1"},
		{"empty fragment dropped", "https://example.com/#", "https://example.com/"},
		{"query byte for byte", "https://example.com/s?b=2&a=1&a=%2f+x&&c=%7E;d", "https://example.com/s?b=2&a=1&a=%2f+x&&c=%7E;d"},
		{"query raw UTF-8 escaped as Chromium sends it", "https://example.com/s?q=café", "https://example.com/s?q=caf%C3%A9"},
		{"empty query kept", "https://example.com/s?", "https://example.com/s?"},
		{"path escapes kept", "https://example.com/%7Euser/a%2Fb", "https://example.com/%7Euser/a%2Fb"},
		{"dot segments removed as Chromium does", "https://example.com/a/../b/./c", "https://example.com/b/c"},
		{"raw ^ | { escaped in the path as Chromium does, kept in the query", "https://example.com/a^b|{?q=a^b|{", "https://example.com/a%5Eb%7C%7B?q=a^b|{"},
		{"lower-case escape kept beside a raw byte", "https://example.com/%e3%83%84/ü", "https://example.com/%e3%83%84/%C3%BC"},
		{"double slash path kept", "https://example.com//cdn.example/x", "https://example.com//cdn.example/x"},
		{"IDN to punycode", "https://Bücher.example/ä", "https://xn--bcher-kva.example/%C3%A4"},
		{"IDN non-transitional", "https://faß.de/", "https://xn--fa-hia.de/"},
		{"punycode kept", "https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/"},
		{"full-width name", "https://ＥＸＡＭＰＬＥ．com/", "https://example.com/"},
		{"soft hyphen ignored", "https://exa\u00admple.com/", "https://example.com/"},
		{"trailing dot dropped", "https://example.com./", "https://example.com/"},
		{"trailing dot with port", "http://example.com.:443/", "http://example.com:443/"},
		{"browser-style hyphens", "https://r3---sn-abc.googlevideo.com/", "https://r3---sn-abc.googlevideo.com/"},
		{"underscore", "https://_acme.example.com/", "https://_acme.example.com/"},
		{"digits in labels", "https://123.example.com/", "https://123.example.com/"},
		{"public IPv4", "http://8.8.8.8/", "http://8.8.8.8/"},
		{"public IPv4 hex", "http://0x08080808/", "http://8.8.8.8/"},
		{"public IPv4 decimal", "http://134744072/", "http://8.8.8.8/"},
		{"public IPv4 trailing dot", "http://8.8.8.8./", "http://8.8.8.8/"},
		{"public IPv6", "http://[2606:4700:4700::1111]/", "http://[2606:4700:4700::1111]/"},
		{"public IPv6 long", "http://[2606:4700:4700:0:0:0:0:1111]:80/", "http://[2606:4700:4700::1111]/"},
		{"public IPv6 upper", "https://[2606:4700:4700::ABCD]/", "https://[2606:4700:4700::abcd]/"},
		{"example TLD allowed", "https://shop.example/", "https://shop.example/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, err := g.ParseTarget(tc.raw)
			if err != nil {
				t.Fatalf("ParseTarget(%q): %v", tc.raw, err)
			}
			if got := u.String(); got != tc.want {
				t.Errorf("ParseTarget(%q) = %q, want %q", tc.raw, got, tc.want)
			}
			if u.Fragment != "" || u.User != nil {
				t.Errorf("ParseTarget(%q) kept fragment %q or userinfo %v", tc.raw, u.Fragment, u.User)
			}
			// A normalised URL is a fixed point.
			again, err := g.ParseTarget(u.String())
			if err != nil || again.String() != u.String() {
				t.Errorf("ParseTarget(%q) = %v, %v; want it unchanged", u, again, err)
			}
		})
	}
}

func TestParseTargetConfiguredExceptions(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, GuardConfig{
		AllowAddrs:   []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8080"), netip.MustParseAddrPort("[::1]:3000")},
		AllowPorts:   []uint16{8443},
		Resolve:      []ResolveRule{{Host: "Intranet", Port: 80, Addr: netip.MustParseAddrPort("127.0.0.1:8080")}},
		DenyPrefixes: []netip.Prefix{netip.MustParsePrefix("93.184.216.0/24")},
	})
	tests := []struct {
		name, raw string
		want      error // nil: accepted
	}{
		{"allowed loopback pair", "http://127.0.0.1:8080/", nil},
		{"allowed pair in hex", "http://0x7f.1:8080/", nil},
		{"allowed v6 pair", "http://[::1]:3000/", nil},
		{"same address other port", "http://127.0.0.1:8081/", ErrTargetRefused},
		{"same address default port", "http://127.0.0.1/", ErrTargetRefused},
		{"other loopback same port", "http://127.0.0.2:8080/", ErrTargetRefused},
		{"mapped form of allowed pair", "http://[::ffff:127.0.0.1]:8080/", ErrTargetRefused},
		{"allowed port", "https://example.com:8443/", nil},
		{"allowed port not for private", "https://10.0.0.1:8443/", ErrTargetRefused},
		{"port still refused", "https://example.com:8444/", ErrTargetRefused},
		{"name with resolve rule", "http://intranet/", nil},
		{"name with rule on other port", "http://intranet:8443/", ErrTargetRefused},
		{"operator deny prefix", "http://93.184.216.34/", ErrTargetRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := g.ParseTarget(tc.raw)
			if tc.want == nil && err != nil {
				t.Fatalf("ParseTarget(%q): %v, want it accepted", tc.raw, err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("ParseTarget(%q) error %v, want %v", tc.raw, err, tc.want)
			}
		})
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, GuardConfig{})
	base, _ := url.Parse("https://shop.example/a/b")
	ref := func(s string) *url.URL {
		r, err := url.Parse(s)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", s, err)
		}
		return base.ResolveReference(r)
	}
	tests := []struct {
		name string
		u    *url.URL
		want error
	}{
		{"public redirect", ref("https://www.example.com/next?x=1#f"), nil},
		{"relative redirect", ref("/other"), nil},
		{"path with space", ref("/a%20b?q=a b"), nil},
		{"IDN host", &url.URL{Scheme: "https", Host: "bücher.example", Path: "/"}, nil},
		{"upper-case scheme", &url.URL{Scheme: "HTTPS", Host: "example.com", Path: "/"}, nil},
		{"nil", nil, ErrInvalidURL},
		{"not absolute", &url.URL{Path: "/x"}, ErrInvalidURL},
		{"ftp redirect", ref("ftp://example.com/"), ErrInvalidURL},
		{"file redirect", ref("file:///etc/passwd"), ErrInvalidURL},
		{"opaque", &url.URL{Scheme: "http", Opaque: "example.com"}, ErrInvalidURL},
		{"zone from Go parser", ref("http://[fe80::1%25eth0]/"), ErrInvalidURL},
		{"decoded space in host", &url.URL{Scheme: "http", Host: "127.0.0.1 .example", Path: "/"}, ErrInvalidURL},
		{"backslash in host", &url.URL{Scheme: "http", Host: `example.com\127.0.0.1`}, ErrInvalidURL},
		{"port leading zero", ref("http://example.com:0080/"), ErrInvalidURL},
		{"too long", ref("/" + strings.Repeat("x", MaxURLBytes)), ErrInvalidURL},
		{"loopback redirect", ref("http://127.0.0.1/admin"), ErrTargetRefused},
		{"protocol-relative loopback", ref("//127.0.0.1/"), ErrTargetRefused},
		{"hex loopback redirect", ref("http://0x7f.1/"), ErrTargetRefused},
		{"metadata redirect", ref("http://169.254.169.254/latest/"), ErrTargetRefused},
		{"v6 mapped redirect", ref("http://[::ffff:a9fe:a9fe]/"), ErrTargetRefused},
		{"internal name", ref("http://metadata.google.internal/"), ErrTargetRefused},
		{"credentials", ref("https://user:pw@example.com/"), ErrTargetRefused},
		{"port", ref("https://example.com:8443/"), ErrTargetRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := g.CheckURL(tc.u)
			if tc.want == nil && err != nil {
				t.Fatalf("CheckURL(%v): %v, want nil", tc.u, err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("CheckURL(%v) = %v, want %v", tc.u, err, tc.want)
			}
		})
	}
}

func TestParseTargetAgreesWithCheckURL(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, GuardConfig{})
	for _, tc := range hostileTargets {
		u, err := url.Parse(tc.raw)
		if err != nil || u.Host == "" || u.User != nil || strings.Contains(u.Path, `\`) {
			continue // Go cannot represent it, or the fault is outside the host
		}
		if err := g.CheckURL(u); err == nil {
			t.Errorf("%s: CheckURL(%q) accepted what ParseTarget refuses", tc.name, tc.raw)
		}
	}
}

func BenchmarkParseTarget(b *testing.B) {
	g := mustGuard(b, GuardConfig{})
	inputs := []struct{ name, raw string }{
		{"ascii", "https://www.example.com/products/shoes?color=red&size=42#reviews"},
		{"idn", "https://Bücher.example/katalog?q=straße"},
		{"ipv4-hex", "http://0x08080808/"},
		{"refused", "http://0x7f.1/"},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = g.ParseTarget(in.raw)
			}
		})
	}
}

// TestParseTargetKeepsEscapes: the normalised target is fetched exactly as
// robots.txt is decided on it: escapes the submitter wrote stay escapes
// (a %2F is not a path separator), raw non-ASCII bytes are escaped.
func TestParseTargetKeepsEscapes(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, GuardConfig{})
	tests := map[string]string{
		"http://x.com/café%2Fb":    "/caf%C3%A9%2Fb",
		"http://x.com/a%2Fb?q=%2F": "/a%2Fb?q=%2F",
		"http://x.com/ünï":         "/%C3%BCn%C3%AF",
		"http://x.com/plain/path":  "/plain/path",
	}
	for in, want := range tests {
		u, err := g.ParseTarget(in)
		if err != nil {
			t.Fatalf("ParseTarget(%q): %v", in, err)
		}
		if got := u.RequestURI(); got != want {
			t.Errorf("ParseTarget(%q).RequestURI() = %q, want %q", in, got, want)
		}
		if got := RequestTarget(u); got != u.RequestURI() {
			t.Errorf("%q: robots.txt decides on %q but the request goes to %q", in, got, u.RequestURI())
		}
	}
}
