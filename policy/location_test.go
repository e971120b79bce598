package policy

import "testing"

func TestResolveLocation(t *testing.T) {
	t.Parallel()
	const base = "http://shop.example/a/b/c?q=1"
	tests := []struct {
		name, loc, want string
	}{
		{"absolute path", "/x/y", "http://shop.example/x/y"},
		{"relative", "d", "http://shop.example/a/b/d"},
		{"query only", "?z", "http://shop.example/a/b/c?z"},
		{"fragment only", "#f", "http://shop.example/a/b/c?q=1"},
		{"empty", "", "http://shop.example/a/b/c?q=1"},
		{"dot dot", "../d", "http://shop.example/a/d"},
		{"%2e%2e", "/a/%2e%2e/d", "http://shop.example/d"},
		{"%2E%2e", "/a/%2E%2e/d", "http://shop.example/d"},
		{".%2E", "/a/.%2E/d", "http://shop.example/d"},
		{"trailing dot dot", "/a/b/..", "http://shop.example/a/"},
		{"trailing %2e", "/a/%2e", "http://shop.example/a/"},
		{"above root", "/../../d", "http://shop.example/d"},
		{"backslashes", `\x\y`, "http://shop.example/x/y"},
		{"two backslashes", `\\other.example\x`, "http://other.example/x"},
		{"tab newline CR", "/x\t/\ny\r", "http://shop.example/x/y"},
		{"leading and trailing C0", "\x01 /x \x1f", "http://shop.example/x"},
		{"scheme relative", "//Other.Example:80/x", "http://other.example/x"},
		{"https default port", "https://other.example:443", "https://other.example/"},
		{"other port", "https://other.example:8443/x", "https://other.example:8443/x"},
		{"same scheme without slashes", "http:d", "http://shop.example/a/b/d"},
		{"other scheme without slashes", "https:other.example/x", "https://other.example/x"},
		{"many slashes", "http:////other.example/x", "http://other.example/x"},
		{"userinfo dropped", "http://u:p@other.example/x", "http://other.example/x"},
		{"percent host", "http://%6Fther.example/", "http://other.example/"},
		{"IPv4 spelling", "http://0x7f.1/", "http://127.0.0.1/"},
		{"escapes kept", "/%78/%7e", "http://shop.example/%78/%7e"},
		{"space and quote escaped", `/a b"`, "http://shop.example/a%20b%22"},
		{"^ and | escaped in a path, not in a query", "/a^b|c?d^e|f", "http://shop.example/a%5Eb%7Cc?d^e|f"},
		{"invalid UTF-8 escaped byte by byte", "/a\xff\xc0\xaf?\xed\xa0\x80", "http://shop.example/a%FF%C0%AF?%ED%A0%80"},
		{"query escaped", "/x?a b'<", "http://shop.example/x?a%20b%27%3C"},
		{"UTF-8 path", "/é", "http://shop.example/%C3%A9"},
		{"empty query kept", "/x?", "http://shop.example/x?"},
	}
	for _, tc := range tests {
		got, err := ResolveLocation(base, tc.loc)
		if err != nil || got != tc.want {
			t.Errorf("%s: ResolveLocation(%q) = %q, %v; want %q", tc.name, tc.loc, got, err, tc.want)
		}
	}
	for _, loc := range []string{"javascript:alert(1)", "data:text/html,x", "ftp://x.example/", "http://", "http://x.example:99999/"} {
		if got, err := ResolveLocation(base, loc); err == nil {
			t.Errorf("ResolveLocation(%q) = %q, want an error", loc, got)
		}
	}
}
