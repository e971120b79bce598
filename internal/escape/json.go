package escape

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// JSON encodes v as json.Marshal does, indented by indent when indent is
// not empty, and writes every Control inside its strings as a \u escape.
// encoding/json already escapes C0 controls (and U+2028, U+2029, <, >, &);
// JSON escapes DEL, C1 and bidi controls too, and invalid UTF-8 in a
// json.RawMessage as \ufffd. The escapes are JSON's own, so the output
// decodes to exactly what v held.
func JSON(v any, indent string) ([]byte, error) {
	var b []byte
	var err error
	if indent != "" {
		b, err = json.MarshalIndent(v, "", indent)
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return nil, err
	}
	return escapeJSON(b), nil
}

// escapeJSON escapes the runes of encoded JSON that encoding/json leaves
// raw. Outside strings, valid JSON holds only ASCII punctuation, literals
// and whitespace, and a C0 control inside a string is already escaped, so
// every rune from DEL up that Control reports is inside a string, where a
// \u escape means the same rune.
func escapeJSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || Control(r) {
			if out == nil {
				out = make([]byte, 0, len(b)+32)
			}
			out = fmt.Appendf(append(out, b[last:i]...), `\u%04x`, r)
			last = i + n
		}
		i += n
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
