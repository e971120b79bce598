package audit

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"lekta.dev/lekta/internal/escape"
)

// terminalAttack retitles the terminal, turns its background red, rings
// the bell, overwrites the line and reverses the text that follows.
const terminalAttack = "\x1b]0;PWNED\x07\x1b[41m\r\u202eevil\u0085"

// TestTextReportEscapesPageData audits a page whose every reported value
// carries terminal control sequences, and checks that the text report
// prints none of them raw but still shows them, escaped.
func TestTextReportEscapesPageData(t *testing.T) {
	e := mustEnv(t, nil)
	a := terminalAttack
	js := `\x1b]0;PWNED\x07\x1b[41m\r\u202eevil\u0085` // the same, in a script
	page := `<!doctype html><html lang="en` + a + `"><head><title>T` + a + `</title>
<meta name="description" content="D` + a + `">
<meta name="googlebot" content="noindex` + a + `">
<meta property="og:title" content="OG` + a + `">
<link rel="alternate" hreflang="de` + a + `" href="/de` + a + `">
<link rel="canonical" href="http://shop.example/c` + a + `">
</head><body><h1>H` + a + `</h1><img src="/img/x` + a + `.png"><a href="/l` + a + `">L` + a + `</a>
<script>console.error("E` + js + `"); document.querySelector("h1").textContent = "JS` + js + `";
setTimeout(() => { throw new Error("X` + js + `"); }, 0);</script></body></html>`
	e.site.Handle("/terminal.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	r := e.audit(t, "http://shop.example/terminal.html", TriggerCLI)
	if r.Status != StatusComplete {
		t.Fatalf("audit: %s", describe(r))
	}
	var out bytes.Buffer
	if err := WriteText(&out, r); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !utf8.ValidString(text) {
		t.Fatalf("the text report is not valid UTF-8")
	}
	for i, c := range text {
		if c != '\n' && escape.Control(c) {
			t.Fatalf("the text report prints %U raw at byte %d: %q", c, i, text[max(0, i-40):min(len(text), i+40)])
		}
	}
	for _, want := range []string{`H\x1b]0;PWNED\x07\x1b[41m \u202eevil\x85`, `JS\x1b]0;PWNED`, `Error: X\x1b]0;PWNED`} {
		if !strings.Contains(text, want) && !strings.Contains(text, strings.ReplaceAll(want, `\`, `\\`)) {
			t.Errorf("the text report does not show %q escaped:\n%s", want, text)
		}
	}
}

func TestCleanText(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"plain text, ünïcode, 日本語": "plain text, ünïcode, 日本語",
		"a\x1b[31mred":             `a\x1b[31mred`,
		"line\nnext\r\tx":          `line\nnext\r\tx`,
		"del\x7f c1\u0085 \u009b":  `del\x7f c1\x85 \x9b`,
		"rtl \u202egnp.exe":        `rtl \u202egnp.exe`,
		"bad \xff utf-8":           "bad \uFFFD utf-8",
		"kept \uFFFD":              "kept \uFFFD",
	}
	for in, want := range tests {
		if got := cleanText(in); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSafeWriterKeepsNewlinesAndSplitRunes(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := &safeWriter{w: &out}
	in := "é\x1b\n日本"
	for i := 0; i < len(in); i++ { // one byte at a time: runes arrive cut
		w.Write([]byte{in[i]})
	}
	if got, want := out.String(), "é\\x1b\n日本"; got != want {
		t.Errorf("safeWriter wrote %q, want %q", got, want)
	}
}
