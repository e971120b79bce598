package policy

import (
	"strings"
	"testing"
)

func TestParseInfoURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"https", "https://audit.example.com/bot", true},
		{"http with port", "http://127.0.0.1:8080/bot", true},
		{"relative", "/bot", false},
		{"no host", "https:///bot", false},
		{"other scheme", "mailto:bots@example.com", false},
		{"space", "https://example.com/our bot", false},
		{"parenthesis ends the comment", "https://example.com/bot)", false},
		{"newline", "https://example.com/\nbot", false},
		{"credentials", "https://user:pw@example.com/bot", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseInfoURL(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("ParseInfoURL(%q) = %q, %v; want ok %v", tc.in, got, err, tc.ok)
			}
			if tc.ok {
				id := DefaultIdentity()
				id.InfoURL = got
				if ua := id.PlainUA(); !strings.HasSuffix(ua, "+"+tc.in+")") {
					t.Errorf("plain user agent %q does not end with the info URL", ua)
				}
			}
		})
	}
}
