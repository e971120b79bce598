package audit

import (
	"bytes"
	"strings"
	"testing"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/testsite"
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
// replaced by plausible values.
func goldenReports(tb testing.TB) map[string][]byte {
	tb.Helper()
	return testsite.GoldenReports(tb)
}

// TestTextOfARunThatDidNotHappen: a rate-limited, skipped, cancelled or
// blocked run says so in one paragraph and claims nothing else: no
// findings, no robots.txt verdict, no lanes with empty user agents.
func TestTextOfARunThatDidNotHappen(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status Status
		reason string
		retry  int64
		want   string
	}{
		{"rate limited", StatusRateLimited, LimitSentence("shop.example", "1/1m", 42e9), 42,
			"Not run: rate limited — This host was audited less than a minute ago; try again in 42 s. The site was not contacted."},
		{"rate limited, reason without a wait", StatusRateLimited, "The per-host limits refused this audit.", 42,
			"Not run: rate limited — The per-host limits refused this audit. Retry after 42 s. The site was not contacted."},
		{"cancelled", StatusCancelled, "The service was shutting down.", 0,
			"Not run: cancelled — The service was shutting down. The site was not contacted."},
		{"blocked", StatusBlocked, "The address resolves to a private network.", 0,
			"Not run: blocked — The address resolves to a private network. The site was not contacted."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &Report{Schema: Schema, ID: "AAAAAAAAAAAAAAAAAAAAAAAAAA", Status: tc.status, Trigger: TriggerCLI, URL: "http://shop.example/",
				Reason: tc.reason, RetryAfterS: tc.retry, Verdict: &compare.Conclusion{Severity: compare.SeverityNone, Summary: tc.reason}}
			r.fillEmpty()
			var out bytes.Buffer
			if err := WriteText(&out, r); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			if flat := strings.Join(strings.Fields(text), " "); !strings.Contains(flat, tc.want) {
				t.Errorf("the text report does not say %q:\n%s", tc.want, text)
			}
			for _, claim := range []string{"FINDINGS", "ROBOTS.TXT", "user agent", "LANES", "VERDICT", "_"} {
				if strings.Contains(text, claim) {
					t.Errorf("the report of a run that did not happen shows %q:\n%s", claim, text)
				}
			}
		})
	}
}

// TestStatusWords: every status has words of its own, without the JSON
// value's underscore.
func TestStatusWords(t *testing.T) {
	t.Parallel()
	for _, s := range []Status{StatusComplete, StatusPartial, StatusSkipped, StatusBlocked, StatusRateLimited,
		StatusTimeout, StatusError, StatusCancelled} {
		w := s.Words()
		if w == "" || strings.Contains(w, "_") {
			t.Errorf("%s.Words() = %q", s, w)
		}
	}
	if got := StatusRateLimited.Words(); got != "rate limited" {
		t.Errorf("rate_limited reads %q, want rate limited", got)
	}
}

// TestLowerFirst: a label starts lower-case inside a sentence unless it
// starts with an acronym or a name.
func TestLowerFirst(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"Open Graph tags": "Open Graph tags", "HTTP status": "HTTP status",
		"Robots meta": "robots meta", "Canonical in the Link header": "canonical in the Link header", "X-Robots-Tag header": "X-Robots-Tag header"} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}
