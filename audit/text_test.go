package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
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
		if got := compare.LowerFirst(in); got != want {
			t.Errorf("compare.LowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTextCauseLine: a finding with a cause is followed by one line
// "caused by …" in words, indented under it; script URLs are shortened in
// the middle and page-controlled strings are escaped for the terminal.
func TestTextCauseLine(t *testing.T) {
	t.Parallel()
	ms := func(n int64) *int64 { return &n }
	long := "http://cdn.example/" + strings.Repeat("assets/", 12) + "bundle.3f9c1d2e.js"
	cases := []struct {
		name  string
		cause compare.Cause
		want  string
	}{
		{"script", compare.Cause{Kind: compare.CauseScript, ScriptURL: "http://shop.example/app.js", Line: 12, Column: 5, PageTimeMS: ms(340), EarlierWriters: 2},
			"caused by /app.js line 12, column 5, at 340 ms of page time (2 earlier scripts also wrote it)"},
		{"script of another host", compare.Cause{Kind: compare.CauseScript, ScriptURL: "https://tags.example/gtm.js?id=X", Line: 1, Column: 900, EarlierWriters: 1},
			"caused by tags.example/gtm.js line 1, column 900 (1 earlier script also wrote it)"},
		{"inline script", compare.Cause{Kind: compare.CauseScript, ScriptURL: "http://shop.example/", Inline: true, Line: 14},
			"caused by an inline script in the page, line 14"},
		{"unknown script", compare.Cause{Kind: compare.CauseScript},
			"caused by a script that could not be identified"},
		{"request", compare.Cause{Kind: compare.CauseRequest, ScriptURL: "http://shop.example/app.js", RequestPath: "/api/products"},
			"caused by /api/products, fetched by /app.js"},
		{"request with its source and library", compare.Cause{Kind: compare.CauseRequest, ScriptURL: "http://shop.example/assets/main-X.js",
			Line: 1, Column: 900, Source: &compare.SourcePos{File: "src/pages.jsx", Line: 36, Column: 9}, Library: "React",
			RequestPath: "/api/products.json", DataShare: 0.92},
			"caused by /api/products.json (which holds 92% of it), fetched by src/pages.jsx line 36, column 9 (in /assets/main-X.js); rendered by React"},
		{"library only", compare.Cause{Kind: compare.CauseScript, ScriptURL: "http://shop.example/vendor/react-dom.production.min.js", Library: "React"},
			"caused by React (/vendor/react-dom.production.min.js), with no frame of the site's own code on the stack"},
		{"library rendering the site's own code", compare.Cause{Kind: compare.CauseScript, ScriptURL: "http://shop.example/vendor/react-dom.production.min.js", Library: "React",
			Defined: &compare.SourcePos{File: "src/pages.jsx", Line: 14}, PageTimeMS: ms(80)},
			"caused by React (/vendor/react-dom.production.min.js) from the site's own code at src/pages.jsx line 14, at 80 ms of page time (found by its words: every frame on the stack was React's)"},
		{"redirect a library made for the site's own code", compare.Cause{Kind: compare.CauseRedirect, Mechanism: compare.RedirectHistory, Target: "http://shop.example/products",
			ScriptURL: "http://shop.example/vendor/vue-router.global.prod.js", Library: "Vue Router", Defined: &compare.SourcePos{File: "src/app.js", Line: 6}},
			"caused by a script that rewrote the address (history API) to http://shop.example/products, by Vue Router (/vendor/vue-router.global.prod.js) from the site's own code at src/app.js line 6"},
		{"redirect of an attribute in the page", compare.Cause{Kind: compare.CauseRedirect, Mechanism: compare.RedirectScript, Target: "http://shop.example/products",
			Defined: &compare.SourcePos{File: "/old-\x1b[2Jproducts", Line: 36}},
			`caused by a script redirect to http://shop.example/products, as the site's own code at /old-\x1b[2Jproducts line 36 says`},
		{"redirect by a header", compare.Cause{Kind: compare.CauseRedirect, Mechanism: compare.RedirectScript, Target: "http://shop.example/products",
			Header: "HX-Redirect", RequestPath: "/old-products", ScriptURL: "http://shop.example/vendor/htmx.min.js", Library: "htmx"},
			"caused by a script redirect to http://shop.example/products, as the HX-Redirect header of /old-products told it, by htmx (/vendor/htmx.min.js)"},
		{"parser", compare.Cause{Kind: compare.CauseParser, Element: "iframe", SourceLine: 48},
			"caused by an <iframe> on line 48 of the server HTML"},
		{"soft 404", compare.Cause{Kind: compare.CauseSoft404, Mechanism: "render"},
			"the page says it was not found (rendered page)"},
		{"meta refresh", compare.Cause{Kind: compare.CauseRedirect, Mechanism: "meta_refresh", Target: "http://shop.example/new", PageTimeMS: ms(1200)},
			"caused by a meta refresh to http://shop.example/new after 1.2 s of page time"},
		{"blocked scripts", compare.Cause{Kind: compare.CauseScript, ScriptURL: "http://shop.example/app.js", Line: 3, BlockedScripts: 2},
			"caused by /app.js line 3; 2 blocked scripts might also have changed it"},
		{"long script URL", compare.Cause{Kind: compare.CauseScript, ScriptURL: long, Line: 1},
			"caused by cdn.example/assets/assets/…/bundle.3f9c1d2e.js line 1"},
		{"hostile script URL", compare.Cause{Kind: compare.CauseScript, ScriptURL: "http://shop.example/\x1b]0;owned\x07x.js\nFINDINGS", Line: 2},
			`caused by http://shop.example/\x1b]0;owned\x07x.js\nFINDINGS line 2`},
		{"hostile request path", compare.Cause{Kind: compare.CauseRequest, RequestPath: "/api\r\x1b[2Jp", ScriptURL: "http://shop.example/a.js"},
			`caused by /api\r\x1b[2Jp, fetched by /a.js`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &Report{Schema: Schema, ID: "AAAAAAAAAAAAAAAAAAAAAAAAAA", Status: StatusComplete, Trigger: TriggerCLI, URL: "http://shop.example/",
				Verdict: &compare.Conclusion{Severity: compare.SeverityCritical, Critical: 1, Summary: "The title differs."}}
			r.fillEmpty()
			c := tc.cause
			r.Findings = []compare.Finding{{Code: "title.render_only", Severity: compare.SeverityCritical, Lane: compare.LaneRender,
				Message: "The title is set by JavaScript.", Cause: &c}, {Code: "canonical.relative", Severity: compare.SeverityInfo, Message: "Relative."}}
			var out bytes.Buffer
			if err := WriteText(&out, r); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			lines := strings.Split(text, "\n")
			i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "[title.render_only]") })
			if i < 0 || i+1 >= len(lines) {
				t.Fatalf("no finding line:\n%s", text)
			}
			var got []string
			for _, l := range lines[i+1:] {
				if !strings.HasPrefix(l, "           ") || strings.Contains(l, "Relative") {
					break
				}
				got = append(got, strings.TrimSpace(l))
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("under the finding:\n  got  %q\n  want %q\n%s", s, tc.want, text)
			}
			if strings.ContainsAny(text, "\x1b\x07\r") {
				t.Errorf("the text report carries a raw control character: %q", text)
			}
			for n, l := range lines {
				if cells(l) > textWidth {
					t.Errorf("line %d is %d cells wide: %q", n+1, cells(l), l)
				}
			}
		})
	}
}

// TestTextGolden prints the golden report whose findings carry causes and
// compares it with testdata/text; -update rewrites it.
func TestTextGolden(t *testing.T) {
	b := goldenReports(t)["causes.json"]
	r, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteText(&out, r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "text", "causes.txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./audit -run TestTextGolden -update to create it)", err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("the text report differs from %s (run go test ./audit -run TestTextGolden -update and review the diff):\n%s", path, firstDiff(string(want), got))
	}
}

// TestTextConsequences: the text report prints the differences a redirect
// causes indented under the redirect finding, each once (issue 32).
func TestTextConsequences(t *testing.T) {
	t.Parallel()
	r := &Report{Schema: Schema, ID: "AAAAAAAAAAAAAAAAAAAAAAAAAA", Status: StatusComplete, Trigger: TriggerCLI, URL: "http://shop.example/",
		Verdict: &compare.Conclusion{Severity: compare.SeverityCritical, Critical: 1, Summary: "A meta refresh sent the browser away."}}
	r.fillEmpty()
	r.Findings = []compare.Finding{
		{Code: compare.CodeCanonicalRelative, Severity: compare.SeverityInfo, Message: "Relative."},
		{Code: compare.CodeTitleChanged, Severity: compare.SeverityInfo, ConsequenceOf: compare.CodeRenderRedirectMetaRefresh, Message: "Its title."},
		{Code: compare.CodeRenderRedirectMetaRefresh, Severity: compare.SeverityCritical, Lane: compare.LaneRender, Message: "A meta refresh sent the browser away."},
	}
	var out bytes.Buffer
	if err := WriteText(&out, r); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	lead := strings.Index(text, "[render.redirect_meta_refresh]")
	under := strings.Index(text, "           - Its title. [title.changed]")
	other := strings.Index(text, "Relative. [canonical.relative]")
	if lead < 0 || under < lead || other < under || strings.Count(text, "[title.changed]") != 1 {
		t.Errorf("the consequence is not printed once, under its redirect:\n%s", text)
	}
}
