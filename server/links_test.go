package server

import "testing"

func TestParsePublicURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		ok             bool
	}{
		{"https", "https://audit.example.com", "https://audit.example.com", true},
		{"trailing slash dropped", "https://audit.example.com/", "https://audit.example.com", true},
		{"behind a path", "http://127.0.0.1:8080/lekta/", "http://127.0.0.1:8080/lekta", true},
		{"no scheme", "audit.example.com", "", false},
		{"relative", "/lekta", "", false},
		{"other scheme", "ftp://audit.example.com", "", false},
		{"query", "https://audit.example.com/?a=1", "", false},
		{"fragment", "https://audit.example.com/#top", "", false},
		{"credentials", "https://u:p@audit.example.com", "", false},
		{"space", "https://audit.example.com/a b", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParsePublicURL(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("ParsePublicURL(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
			}
			if tc.ok {
				if l := PublicLink(got, "/r/abc"); l != tc.want+"/r/abc" {
					t.Errorf("PublicLink = %q", l)
				}
			}
		})
	}
	if l := PublicLink("", "/badge/x.svg"); l != "/badge/x.svg" {
		t.Errorf("without a public URL: %q, want the path", l)
	}
}
