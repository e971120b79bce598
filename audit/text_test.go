package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lekta.dev/lekta/compare"
)

// TestTextReportFits80Columns prints every golden report and checks each
// line's width in terminal cells, and that no value shows Go's own
// formatting of a map, a struct or a nil.
func TestTextReportFits80Columns(t *testing.T) {
	reports := map[string]*Report{}
	for name, b := range goldenReports(t) {
		r, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		reports[name] = r
	}
	// Wide characters and a long unbroken URL must not widen the report.
	wide := *reports["index.json"]
	wide.URL = "http://shop.example/" + strings.Repeat("長い", 30) + "/" + strings.Repeat("x", 120)
	reports["wide"] = &wide
	for name, r := range reports {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteText(&out, r); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			for i, l := range strings.Split(text, "\n") {
				if n := cells(l); n > textWidth {
					t.Errorf("line %d is %d cells wide: %q", i+1, n, l)
				}
			}
			for _, bad := range []string{"map[", "{}", "%!", "<nil>", "&{", "0xc0"} {
				if strings.Contains(text, bad) {
					t.Errorf("the text report shows %q:\n%s", bad, text)
				}
			}
			if !strings.HasPrefix(strings.SplitN(text, "VERDICT", 2)[1], "  ") {
				t.Errorf("no verdict line:\n%s", text)
			}
		})
	}
}

func TestCellsAndWrap(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"abc": 3, "日本": 4, "e\u0301": 1, "ｆｕｌｌ": 8, "": 0} {
		if got := cells(s); got != want {
			t.Errorf("cells(%q) = %d, want %d", s, got, want)
		}
	}
	if got := fit("日本語のタイトル", 7); got != "日本語…" || cells(got) != 7 {
		t.Errorf("fit = %q (%d cells)", got, cells(got))
	}
	if got := fit("ab", 4); got != "ab  " {
		t.Errorf("fit pads to %q", got)
	}
	for _, l := range wrap("a "+strings.Repeat("x", 50)+" b 日本語日本語日本語", 20) {
		if cells(l) > 20 {
			t.Errorf("wrapped line %q is %d cells", l, cells(l))
		}
	}
}

// goldenReports reads every golden report with its volatile placeholders
// replaced by plausible values, as JSON and decoded.
func goldenReports(tb testing.TB) map[string][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no golden reports: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		s := string(b)
		for ph, v := range map[string]string{
			`"<id>"`: `"AAAAAAAAAAAAAAAAAAAAAAAAAA"`, `"<started_at>"`: `"2026-12-01T10:00:00Z"`,
			`"<duration_ms>"`: `1234`, `"<ttfb_ms>"`: `12`, `"<page_time_ms>"`: `180`, `"<Last-Modified>"`: `"Tue, 01 Dec 2026 10:00:00 GMT"`,
			`"<Etag>"`: `"\"abc\""`,
		} {
			s = strings.ReplaceAll(s, ph, v)
		}
		out[filepath.Base(f)] = []byte(s)
	}
	return out
}

// TestTextVerdictOfARefusedAudit: an audit the limits refused has no
// finding, and its verdict still does not read as good news.
func TestTextVerdictOfARefusedAudit(t *testing.T) {
	r := &Report{Schema: Schema, Status: StatusRateLimited, Trigger: TriggerCLI, URL: "http://shop.example/",
		Reason:  LimitSentence("shop.example", "1/1m", 42e9),
		Verdict: &compare.Conclusion{Severity: compare.SeverityNone}}
	r.Verdict.Summary = r.Reason
	var out bytes.Buffer
	if err := WriteText(&out, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"VERDICT  NOT RUN", "This host was audited less than a minute ago; try again in 42 s."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, out.String())
		}
	}
}
