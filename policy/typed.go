package policy

import "strings"

// WithDefaultScheme returns what a person typed with https:// in front
// when it names no scheme ("example.com/page", "shop.example:8080/x"), as
// a browser's address bar reads it. Anything else comes back unchanged, so
// that ParseTarget names the scheme it refuses ("javascript:alert(1)").
func WithDefaultScheme(typed string) string {
	s := strings.TrimSpace(typed)
	if s == "" || strings.Contains(s, "://") || strings.HasPrefix(s, "/") {
		return typed
	}
	host, _, _ := strings.Cut(s, "/")
	host, _, _ = strings.Cut(host, "?")
	if _, port, ok := strings.Cut(host, ":"); ok {
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return typed // a scheme, not a port
		}
	}
	return "https://" + s
}
