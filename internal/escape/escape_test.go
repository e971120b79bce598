package escape

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// attack retitles a terminal, rings its bell, turns its background red,
// overwrites the line and reverses the text after it, in C0, C1 and bidi
// controls.
const attack = "\x1b]0;PWNED\x07\x1b[41m\r\u202eevil\u0085\u009b31m\x7f\u2066x\u2069"

func TestControlIsCcOrBidiControl(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= 0x10ffff; r++ {
		want := unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
		if got := Control(r); got != want {
			t.Errorf("Control(%U) = %v, want %v", r, got, want)
		}
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"plain", "plain text, ünïcode, 日本語", "plain text, ünïcode, 日本語"},
		{"escape sequence", "a\x1b[31mred", `a\x1b[31mred`},
		{"line breaks and tab", "line\nnext\r\tx", `line\nnext\r\tx`},
		{"DEL and C1", "del\x7f c1\u0085 \u009b", `del\x7f c1\x85 \x9b`},
		{"bidi", "rtl \u202egnp.exe \u061c\u200e\u200f\u202a\u2066\u2069", `rtl \u202egnp.exe \u061c\u200e\u200f\u202a\u2066\u2069`},
		{"invalid UTF-8", "bad \xff utf-8", "bad \uFFFD utf-8"},
		{"replacement character kept", "kept \uFFFD", "kept \uFFFD"},
		{"backslash kept", `a\x1b`, `a\x1b`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Text(tc.in); got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestPage(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"markup kept", "<p>a\n\tb “c” · d</p>\n", "<p>a\n\tb “c” · d</p>\n"},
		{"controls escaped", "<title>" + attack + "</title>",
			`<title>\x1b]0;PWNED\x07\x1b[41m\r\u202eevil\x85\x9b31m\x7f\u2066x\u2069</title>`},
		{"CRLF of a form field kept, a lone CR escaped", "<textarea>a\r\nb\rc\r</textarea>", "<textarea>a\r\nb\\rc\\r</textarea>"},
		{"invalid UTF-8", "<p>\xc2</p>", "<p>\uFFFD</p>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := string(Page([]byte(tc.in))); got != tc.want {
				t.Errorf("Page(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestJSON: every control comes out as a \u escape, in compact and
// indented JSON, and the escapes decode to the same string.
func TestJSON(t *testing.T) {
	t.Parallel()
	type doc struct {
		Title string            `json:"title"`
		Items []string          `json:"items"`
		Map   map[string]string `json:"map"`
		Raw   json.RawMessage   `json:"raw"`
	}
	in := doc{Title: "T" + attack, Items: []string{attack, "plain ü"}, Map: map[string]string{attack: attack},
		Raw: json.RawMessage(`{"k": "r` + "\u202e\u0085" + `"}`)}
	want := []string{`T\u001b]0;PWNED\u0007\u001b[41m\r\u202eevil\u0085\u009b31m\u007f\u2066x\u2069`, `"r\u202e\u0085"`, `"plain ü"`}
	for _, indent := range []string{"", "  "} {
		b, err := JSON(in, indent)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range string(b) {
			if Control(r) && r != '\n' {
				t.Errorf("indent %q: raw %U at byte %d: %q", indent, r, i, b[max(0, i-20):min(len(b), i+20)])
			}
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("indent %q: %q lacks %s", indent, b, w)
			}
		}
		var out doc
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("indent %q: decode %q: %v", indent, b, err)
		}
		if out.Title != in.Title || out.Items[0] != attack || out.Map[attack] != attack {
			t.Errorf("indent %q: decoded %+v, want the strings of %+v", indent, out, in)
		}
	}
}
