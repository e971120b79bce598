package policy

import "testing"

func TestWithDefaultScheme(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"example.com/page":      "https://example.com/page",
		" example.com ":         "https://example.com",
		"shop.example:8080/x?y": "https://shop.example:8080/x?y",
		"http://example.com/":   "http://example.com/",
		"HTTPS://example.com/":  "HTTPS://example.com/",
		"javascript:alert(1)":   "javascript:alert(1)",
		"mailto:a@example.com":  "mailto:a@example.com",
		"//example.com/":        "//example.com/",
		"":                      "",
		"example.com?q=a:b":     "https://example.com?q=a:b",
	} {
		if got := WithDefaultScheme(in); got != want {
			t.Errorf("WithDefaultScheme(%q) = %q, want %q", in, got, want)
		}
	}
}
