package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/testsite"
)

// TestAuditJSONEscapesControls: issue 34. `lekta audit --json` (and the
// store, which keeps the same encoding) writes a page's C1 and bidi
// controls as \u escapes, never raw, and the report decodes back to the
// same values.
func TestAuditJSONEscapesControls(t *testing.T) {
	t.Parallel()
	const attack = "\x1b]0;PWNED\x07\x1b[41m\u202eevil\u0085\u009b31m\x7f\u2066"
	r, err := audit.Decode(testsite.GoldenReports(t)["causes.json"])
	if err != nil {
		t.Fatal(err)
	}
	r.Lanes.Render.ConsoleErrors = []string{"E" + attack}
	r.Findings = append(r.Findings, compare.Finding{Code: compare.CodeTitleChanged, Severity: compare.SeverityInfo,
		Message: "The title “T" + attack + "” changed."})
	var out bytes.Buffer
	if err := printReport(&out, r, true); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"\x1b", "\x07", "\x7f", "\u202e", "\u0085", "\u009b", "\u2066"} {
		if n := strings.Count(out.String(), c); n > 0 {
			t.Errorf("--json prints %q raw %d times", c, n)
		}
	}
	if want := `"E\u001b]0;PWNED\u0007\u001b[41m\u202eevil\u0085\u009b31m\u007f\u2066"`; !strings.Contains(out.String(), want) {
		t.Errorf("--json lacks %s", want)
	}
	back, err := audit.Decode(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("the printed report decodes to other values:\n got %+v\nwant %+v", back, r)
	}
}
