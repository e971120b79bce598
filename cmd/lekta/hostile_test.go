package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"lekta.dev/lekta/internal/canary"
)

// hostileTargets are inputs "lekta audit" must refuse before any DNS
// lookup, connection or browser start, each with what the message says.
// PORT is the canary's port, which the test allows with --allow-port so
// that only the address can be the reason.
var hostileTargets = []struct{ name, url, want string }{
	// Schemes other than http and https, and URLs that are not absolute.
	{"file", "file:///etc/passwd", `scheme "file"`},
	{"file with host", "file://127.0.0.1/etc/passwd", `scheme "file"`},
	{"gopher", "gopher://127.0.0.1:PORT/_INFO", `scheme "gopher"`},
	{"ftp", "ftp://127.0.0.1:PORT/", `scheme "ftp"`},
	{"dict", "dict://127.0.0.1:PORT/info", `scheme "dict"`},
	{"data", "data:text/html,<script>alert(1)</script>", `scheme "data"`},
	{"javascript", "javascript:alert(document.domain)", `scheme "javascript"`},
	{"chrome", "chrome://settings/", `scheme "chrome"`},
	{"view-source", "view-source:http://127.0.0.1:PORT/", `scheme "view-source"`},
	{"about", "about:blank", `scheme "about"`},
	{"blob", "blob:http://example.com/8f1c", `scheme "blob"`},
	{"ws", "ws://127.0.0.1:PORT/", `scheme "ws"`},
	{"wss", "wss://example.com/socket", `scheme "wss"`},
	{"no slashes", "http:127.0.0.1:PORT/", "must be followed by //"},
	{"one slash", "http:/127.0.0.1:PORT/", "must be followed by //"},
	{"scheme-relative", "//127.0.0.1:PORT/", "no scheme"},
	// Taken as https://, as a browser's address bar does, then refused.
	{"no scheme", "127.0.0.1:PORT", "loopback"},

	// Credentials.
	{"userinfo", "http://user:pass@example.com/", "credentials"},
	{"userinfo hiding the host", "http://example.com@127.0.0.1:PORT/", "credentials"},
	{"empty userinfo", "http://@127.0.0.1:PORT/", "credentials"},

	// Ports: not allowed, or not canonical decimal.
	{"port not allowed", "http://example.com:8080/", "port 8080 is not allowed"},
	{"redis port", "http://example.com:6379/", "port 6379 is not allowed"},
	{"port leading zero", "http://example.com:0080/", "leading zero"},
	{"port plus sign", "http://example.com:+80/", `"+80"`},
	{"port zero", "http://example.com:0/", "out of range"},
	{"port too big", "http://example.com:65536/", "out of range"},
	{"port empty", "http://example.com:/", "empty"},
	{"two ports", "http://example.com:80:80/", "brackets"},

	// Bytes that browsers and Go read differently.
	{"space", "http://example.com /", "space"},
	{"tab in host", "http://127.0.0.1\t.example.com/", "control character 0x09"},
	{"NUL", "http://example.com/\x00", "control character"},
	{"DEL", "http://example.com/\x7f", "control character 0x7f"},
	{"CRLF", "http://example.com/\r\nHost: 127.0.0.1", "control character 0x0d"},
	{"backslash after scheme", `http:/\127.0.0.1:PORT/`, "backslash"},
	{"backslash authority", `http://example.com\@127.0.0.1:PORT/`, "backslash"},
	{"backslashes only", `http:\\127.0.0.1:PORT\`, "backslash"},
	{"percent in host", "http://%31%32%37.0.0.1:PORT/", "contains %"},
	{"percent in name", "http://loc%61lhost:PORT/", "contains %"},
	{"invalid UTF-8", "http://\xff.example.com/", "UTF-8"},
	{"too long", "http://example.com/" + strings.Repeat("a", 2100), "more than 2048"},

	// Special-use IPv4 in every spelling browsers accept.
	{"loopback", "http://127.0.0.1:PORT/", "127.0.0.1 is a loopback address"},
	{"loopback elsewhere in 127/8", "http://127.8.9.10:PORT/", "loopback"},
	{"loopback decimal", "http://2130706433:PORT/", "2130706433 is 127.0.0.1, a loopback"},
	{"loopback hex", "http://0x7f000001:PORT/", "loopback"},
	{"loopback hex parts", "http://0x7f.1:PORT/", "0x7f.1 is 127.0.0.1"},
	{"loopback octal", "http://0177.0.0.1:PORT/", "loopback"},
	{"loopback short", "http://127.1:PORT/", "127.1 is 127.0.0.1"},
	{"loopback trailing dot", "http://127.0.0.1.:PORT/", "loopback"},
	{"loopback full-width", "http://１２７．０．０．１:PORT/", "a loopback address"},
	{"loopback circled digits", "http://①②⑦.⓪.⓪.①:PORT/", "loopback"},
	{"loopback ideographic dots", "http://127。0。0。1:PORT/", "loopback"},
	{"unspecified", "http://0.0.0.0:PORT/", "unspecified"},
	{"unspecified as 0", "http://0:PORT/", "unspecified"},
	{"private 10/8", "http://10.0.0.1/", "private"},
	{"private 172.16/12", "http://172.16.0.1/", "private"},
	{"private 192.168/16", "http://192.168.1.1/", "private"},
	{"cloud metadata", "http://169.254.169.254/latest/meta-data/", "cloud metadata"},
	{"cloud metadata decimal", "http://2852039166/latest/meta-data/", "cloud metadata"},
	{"cloud metadata hex", "http://0xa9fea9fe/", "cloud metadata"},
	{"cloud metadata octal", "http://0251.0376.0251.0376/", "cloud metadata"},
	{"AWS container credentials", "http://169.254.170.2/v2/credentials", "AWS container credentials"},
	{"Azure WireServer", "http://168.63.129.16/", "Azure"},
	{"link-local", "http://169.254.1.1/", "link-local"},
	{"carrier-grade NAT", "http://100.64.0.1/", "carrier-grade NAT"},
	{"multicast", "http://224.0.0.1/", "multicast"},
	{"broadcast", "http://255.255.255.255/", "broadcast"},
	{"benchmarking", "http://198.18.0.1/", "benchmarking"},
	{"documentation", "http://192.0.2.1/", "documentation"},
	{"reserved", "http://240.0.0.1/", "reserved"},

	// Special-use IPv6, and IPv4 carried inside IPv6.
	{"IPv6 loopback", "http://[::1]:PORT/", "[::1] is a loopback address"},
	{"IPv6 loopback long", "http://[0:0:0:0:0:0:0:1]:PORT/", "loopback"},
	{"IPv6 unspecified", "http://[::]:PORT/", "unspecified"},
	{"IPv4-mapped", "http://[::ffff:127.0.0.1]:PORT/", "IPv4-mapped"},
	{"IPv4-mapped hex", "http://[::ffff:7f00:1]:PORT/", "IPv4-mapped"},
	{"IPv4-compatible", "http://[::127.0.0.1]:PORT/", "IPv4-compatible"},
	{"NAT64", "http://[64:ff9b::7f00:1]:PORT/", "NAT64"},
	{"6to4", "http://[2002:7f00:1::]:PORT/", "6to4"},
	{"unique local", "http://[fd12:3456::1]/", "unique local"},
	{"AWS IPv6 metadata", "http://[fd00:ec2::254]/", "AWS metadata"},
	{"IPv6 link-local", "http://[fe80::1]/", "link-local"},
	{"IPv6 zone id", "http://[fe80::1%25lo]/", "contains %"},
	{"IPv6 multicast", "http://[ff02::1]/", "multicast"},
	{"IPv6 documentation", "http://[2001:db8::1]/", "documentation"},

	// Hosts that end in a number are IP literals to a browser.
	{"name ending in a number", "http://example.123/", "not a valid IPv4"},
	{"name ending in hex", "http://foo.0x7f/", "not a valid IPv4"},
	{"five parts", "http://127.0.0.0.1/", "not a valid IPv4"},

	// Names that can only be internal.
	{"localhost", "http://localhost:PORT/", "localhost is a name for this machine"},
	{"localhost upper case", "http://LOCALHOST:PORT/", "localhost"},
	{"localhost trailing dot", "http://localhost.:PORT/", "localhost"},
	{"subdomain of localhost", "http://canary.localhost:PORT/", "name for this machine"},
	{"localhost circled", "http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ:PORT/", "localhost"},
	{"single label", "http://intranet/", "single-label"},
	{"dot internal", "http://metadata.google.internal/computeMetadata/v1/", ".internal"},
	{"dot local", "http://printer.local/", ".local"},
	{"home.arpa", "http://router.home.arpa/", ".arpa"},
	{"dot localdomain", "http://db.localdomain/", ".localdomain"},
}

// TestAuditRefusesHostileTargets runs "lekta audit" on each hostile target:
// exit status 2, a message saying why, nothing on stdout, and nothing
// reaches the canary. --chromium names a browser that does not exist, so a
// target that got past validation would end with status 3 (browser
// missing): a 2 proves the refusal came before the browser, the store and
// the network. The control case shows the same flags reach that point.
func TestAuditRefusesHostileTargets(t *testing.T) {
	canary := canary.Loopback(t)
	port := strconv.Itoa(canary.Port())
	audit := func(t *testing.T, target string) (int, string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		noEnv := func(string) string { return "" }
		err := run(context.Background(), []string{"audit", "--chromium", "/nonexistent/chromium",
			"--allow-port", port, target}, noEnv, &stdout, &stderr)
		code := exitCode(err, &stderr)
		return code, stdout.String(), stderr.String()
	}
	if len(hostileTargets) < 60 {
		t.Fatalf("only %d hostile targets", len(hostileTargets))
	}
	t.Run("refused", func(t *testing.T) {
		for _, tc := range hostileTargets {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				code, stdout, stderr := audit(t, strings.ReplaceAll(tc.url, "PORT", port))
				if code != exitBadInput {
					t.Fatalf("exit status %d, want %d; stderr: %s", code, exitBadInput, stderr)
				}
				if !strings.HasPrefix(stderr, "lekta: ") || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
					t.Errorf("stderr %q: want one line saying %q", stderr, tc.want)
				}
				if stdout != "" {
					t.Errorf("stdout: %q", stdout)
				}
			})
		}
	})
	t.Run("control: a public target reaches the browser check", func(t *testing.T) {
		code, _, stderr := audit(t, "http://example.com/")
		if code != exitNotRun || !strings.Contains(strings.ToLower(stderr), "chromium not found") {
			t.Errorf("exit status %d, stderr %q: want %d saying chromium is missing", code, stderr, exitNotRun)
		}
	})
	canary.CheckZero(t)
}
