package compare

import (
	"strings"

	"golang.org/x/text/language"
)

// validHreflang reports whether an hreflang value is one search engines
// accept: "x-default", or a BCP 47 language with an optional script and an
// optional region (de, de-AT, zh-Hans-CN, es-419), with hyphens only. The
// language must be a registered one (golang.org/x/text/language knows the
// IANA registry), so "xx" or "XX-be-Hans" are not valid; nothing is trimmed.
func validHreflang(s string) bool {
	if strings.EqualFold(s, "x-default") {
		return true
	}
	parts := strings.Split(s, "-")
	if len(parts) > 3 || !isAlpha(parts[0]) || len(parts[0]) < 2 || len(parts[0]) > 3 {
		return false
	}
	rest := parts[1:]
	if len(rest) > 0 && len(rest[0]) == 4 && isAlpha(rest[0]) {
		rest = rest[1:] // script
	}
	if len(rest) > 0 && (len(rest[0]) == 2 && isAlpha(rest[0]) || len(rest[0]) == 3 && isDigits(rest[0])) {
		rest = rest[1:] // region
	}
	if len(rest) > 0 {
		return false
	}
	tag, err := language.Parse(s)
	if err != nil {
		return false
	}
	_, conf := tag.Base()
	return conf == language.Exact
}

// isAlpha reports whether s is non-empty ASCII letters.
func isAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

// isDigits reports whether s is non-empty ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
