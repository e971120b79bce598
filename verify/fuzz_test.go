package verify

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseLine: any input gives a claim or an error wrapping
// ErrUnreadable whose message carries no control character; never a panic.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`shop.example:443 203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "GET /a?b HTTP/1.1" 200 5 "-" "x"`,
		`203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1" 200 5`,
		`[`, `"`, `a b c [d] "e`, "1.2.3.4 - - [01/Dec/2026:12:03:41 +0000] \"GET /\x1b[2J HTTP/1.1\" 200 1",
	} {
		f.Add(s, "shop.example")
	}
	f.Fuzz(func(t *testing.T, line, host string) {
		c, err := ParseLine(line, host)
		if err != nil {
			if !errors.Is(err, ErrUnreadable) || strings.ContainsAny(err.Error(), "\x00\x1b\r\n") {
				t.Fatalf("ParseLine(%q, %q) = %v", line, host, err)
			}
			return
		}
		if c.Host == "" || !c.Client.IsValid() || c.Method == "" || !strings.HasPrefix(c.Path, "/") {
			t.Fatalf("ParseLine(%q, %q) = %+v without error", line, host, c)
		}
	})
}
