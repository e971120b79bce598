package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
)

func TestNewCell(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want cell
	}{
		{"nil", nil, cell{Empty: true}},
		{"empty string", "", cell{Empty: true}},
		{"string", "Kettles", cell{Text: "Kettles"}},
		{"int", 15, cell{Text: "15"}},
		{"bool", true, cell{Text: "yes"}},
		{"empty list", []string{}, cell{List: true, Empty: true}},
		{"list", []string{"a", "b"}, cell{List: true, Items: []item{{Text: "a"}, {Text: "b"}}}},
		{"empty map", map[string]string{}, cell{List: true, Empty: true}},
		{"map sorted", map[string]string{"gptbot": "noindex", "bingbot": "all"},
			cell{List: true, Items: []item{{Text: "bingbot: all"}, {Text: "gptbot: noindex"}}}},
		{"empty struct", compare.OpenGraph{}, cell{List: true, Empty: true}},
		{"hreflang", []compare.Alternate{{Lang: "de", Href: "http://shop.example/de/"}},
			cell{List: true, Items: []item{{Text: "de → http://shop.example/de/"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := newCell(tc.v); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("newCell(%#v) = %+v, want %+v", tc.v, got, tc.want)
			}
			// A report read back from the store holds the decoded form; it must read the same.
			b, _ := json.Marshal(tc.v)
			var decoded any
			json.Unmarshal(b, &decoded)
			if got := newCell(decoded); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("decoded: newCell(%#v) = %+v, want %+v", decoded, got, tc.want)
			}
		})
	}
}

func TestDiffRowMarksOneSidedItems(t *testing.T) {
	row := newDiffRow(compare.FieldDiff{Field: "h1", Plain: []string{"Kettles"}, Render: []string{"Kettles", "Sale"},
		Change: compare.ChangeChanged})
	if !row.Differs || row.Plain.Items[0].Only || row.Render.Items[0].Only || !row.Render.Items[1].Only {
		t.Errorf("row %+v: want only the rendered lane's second item marked", row)
	}
}

// TestNumbersAgree: issue 14 point 5. The terminal, the report page and
// the verdict write a share, a size and a duration with one formatter, so
// the same report never says 1% in one place and 0% in another.
func TestNumbersAgree(t *testing.T) {
	share, links := 0.006, 0.996
	r := &audit.Report{Schema: audit.Schema, ID: "AAAAAAAAAAAAAAAAAAAAAAAAAA", URL: "http://shop.example/", Status: audit.StatusComplete,
		Trigger: audit.TriggerCLI, DurationMS: 41100,
		Verdict:  &compare.Conclusion{Summary: "x", Severity: compare.SeverityNone, TextShare: &share, LinkShare: &links},
		Findings: []compare.Finding{}, Diff: []compare.FieldDiff{}}
	r.Lanes.Plain = audit.LaneReport{Outcome: audit.OutcomeOK, HTTPStatus: 200, Bytes: 1536, TTFBMS: 850, DurationMS: 1200}
	r.Lanes.Render.LaneReport = r.Lanes.Plain
	var text strings.Builder
	if err := audit.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	v := newReportView(r)
	for _, want := range []string{compare.Percent(share), compare.Percent(links), compare.Size(1536), compare.Millis(850), compare.Millis(41100)} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, text.String())
		}
	}
	if v.TextPct != "<1%" || v.LinkPct != "99%" || v.Duration != "42 s" {
		t.Errorf("page: text %s links %s took %s", v.TextPct, v.LinkPct, v.Duration)
	}
	var sizes []string
	for _, l := range v.Lanes {
		sizes = append(sizes, l.Plain)
	}
	if !slices.Contains(sizes, "1.5 KB") || !slices.Contains(sizes, "850 ms") {
		t.Errorf("page lane rows %q lack the size and the first byte as the text report writes them", sizes)
	}
}

// TestLaneRowsNotModified: the report page says a 304 reused the previous extract.
func TestLaneRowsNotModified(t *testing.T) {
	r := &audit.Report{}
	r.Lanes.Plain = audit.LaneReport{Outcome: audit.OutcomeOK, HTTPStatus: 304, NotModified: true}
	r.Lanes.Render.LaneReport = audit.LaneReport{Outcome: audit.OutcomeOK, HTTPStatus: 200}
	for _, row := range laneRows(r) {
		if row.Label == "HTTP status" {
			if !strings.Contains(row.Plain, "previous extract was reused") || row.Render != "200" {
				t.Fatalf("HTTP status row %+v", row)
			}
			return
		}
	}
	t.Fatal("no HTTP status row")
}

// TestReportPageRobotsNotes: the report page says when only one reading of
// robots.txt disallowed the page, and when the answer covers only the part
// of a large file LektaBot read; the file's own bytes stay escaped.
func TestReportPageRobotsNotes(t *testing.T) {
	t.Parallel()
	p, err := newPages()
	if err != nil {
		t.Fatal(err)
	}
	r, err := audit.Decode([]byte(`{"schema":"` + audit.Schema + `","id":"r1","url":"http://shop.example/x","status":"skipped","trigger":"scheduled"}`))
	if err != nil {
		t.Fatal(err)
	}
	big := "User-agent: *\nDisallow:\v/x<b>\n" + strings.Repeat("# filler\n", 60000)
	res := policy.RobotsResult{URL: "http://shop.example/robots.txt", Hops: []string{"http://shop.example/robots.txt"},
		Outcome: policy.RobotsFetched, HTTPStatus: 200, Size: len(big), Robots: policy.ParseRobots([]byte(big))}
	report := func(path string) *audit.Report {
		d, err := res.Decide("LektaBot", path)
		if err != nil {
			t.Fatal(err)
		}
		sec := policy.NewRobotsReport(res, d)
		r.Robots = &sec
		return r
	}
	r = report("/x<b>")
	rec := httptest.NewRecorder()
	p.render(rec, nil, http.StatusOK, "report", newReportView(r))
	page := rec.Body.String()
	for _, want := range []string{
		`<td class="robots-note">Only Google&#39;s reading of the file disallows this page`,
		`LektaBot obeys the stricter reading.`,
		`<td class="robots-note">robots.txt is larger than 512000 bytes (500 KiB); LektaBot, like Google, read only that much of it.`,
		`rule <code>Disallow:\v/x&lt;b&gt;</code>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report page lacks %q", want)
		}
	}
	r = report("/y")
	rec = httptest.NewRecorder()
	p.render(rec, nil, http.StatusOK, "report", newReportView(r))
	if page := rec.Body.String(); !strings.Contains(page, "so this answer covers only the part read: a Disallow in the rest was not seen.") ||
		strings.Contains(page, "Only Google") {
		t.Errorf("partial answer: notes wrong in\n%s", page)
	}
}

// TestReportPageCauses: a finding with a cause has a short line under it
// in words, the script's path cut in the middle and its full URL in the
// title attribute, every string from the page escaped by html/template.
func TestReportPageCauses(t *testing.T) {
	t.Parallel()
	p, r := causesFixture(t)
	hostile := `http://evil.example/"><script>alert(1)</script>.js`
	r.Findings = append(r.Findings, compare.Finding{Code: "lang.render_only", Severity: compare.SeverityInfo, Lane: compare.LaneRender,
		Message: "The language is set by JavaScript.", Cause: &compare.Cause{Kind: compare.CauseRequest, ScriptURL: hostile,
			RequestPath: `/api/<img src=x onerror=alert(2)>`}})
	rec := httptest.NewRecorder()
	p.render(rec, nil, http.StatusOK, "report", newReportView(r))
	page := rec.Body.String()
	for _, want := range []string{
		`<p class="message">The title “Blue Stoneware Kettle | Lekta Test Shop” is set by JavaScript; AI crawlers that do not render see a page without a title. Put it in the server HTML.</p>` +
			`<p class="cause" title="http://shop.example/static/js/vendor/chunks/app.3f9c1d2e.js">Caused by /static/js/vendor/chunks/app.3f9c1d2e.js line 12, column 5, at 340 ms of page time (2 earlier scripts also wrote it); 1 blocked script might also have changed it</p>`,
		`<p class="cause">Caused by an inline script in the page, line 14, at 120 ms of page time</p>`,
		`<p class="cause" title="http://shop.example/static/app.js">Caused by /api/products (which holds 80% of it), fetched by src/pages.jsx line 12, column 3 (in /static/app.js); rendered by React</p>`,
		`<p class="cause">Caused by an &lt;iframe&gt; on line 48 of the server HTML</p>`,
		`<p class="cause">The page says it was not found (rendered page)</p>`,
		`<p class="cause">Caused by a meta refresh to http://shop.example/kettles/blue after 1.2 s of page time</p>`,
		`title="http://evil.example/&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;.js"`,
		`Caused by /api/&lt;img src=x onerror=alert(2)&gt;, fetched by evil.example/`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report page lacks %s", want)
		}
	}
	for _, bad := range []string{"<script>alert", "<img src=x"} {
		if strings.Contains(page, bad) {
			t.Errorf("the report page carries %q unescaped", bad)
		}
	}
	if n := strings.Count(page, `<p class="cause"`); n != 7 {
		t.Errorf("%d cause lines, want 7 (one per finding with a cause)", n)
	}
}

// TestReportPageConsequences: the differences a redirect causes are listed
// under the redirect finding, each once, not among the findings of their
// own (issue 32).
func TestReportPageConsequences(t *testing.T) {
	t.Parallel()
	p, r := causesFixture(t)
	cause := &compare.Cause{Kind: compare.CauseRedirect, Mechanism: compare.RedirectMetaRefresh, Target: "http://shop.example/new"}
	r.Findings = []compare.Finding{
		{Code: compare.CodeRenderRedirectMetaRefresh, Severity: compare.SeverityCritical, Lane: compare.LaneRender, Message: "A meta refresh sent the browser away.", Cause: cause},
		{Code: compare.CodeContentRenderOnly, Severity: compare.SeverityInfo, ConsequenceOf: compare.CodeRenderRedirectMetaRefresh, Message: "A consequence of the redirect: its words.", Cause: cause},
		{Code: compare.CodeTitleChanged, Severity: compare.SeverityInfo, ConsequenceOf: compare.CodeRenderRedirectMetaRefresh, Message: "A consequence of the redirect: its title.", Cause: cause},
		{Code: compare.CodeCanonicalRelative, Severity: compare.SeverityInfo, Message: "Relative canonical."},
	}
	rec := httptest.NewRecorder()
	p.render(rec, nil, http.StatusOK, "report", newReportView(r))
	page := rec.Body.String()
	redirect := strings.Index(page, `id="finding-render.redirect_meta_refresh-render"`)
	list := strings.Index(page, `<details class="consequences"><summary>2 differences follow from it</summary>`)
	words := strings.Index(page, "A consequence of the redirect: its words.")
	relative := strings.Index(page, "Relative canonical.")
	if redirect < 0 || list < redirect || words < list || relative < words {
		t.Errorf("the consequences are not listed under the redirect, before the other findings:\n%s", page)
	}
	if n := strings.Count(page, "A consequence of the redirect"); n != 2 {
		t.Errorf("%d consequence messages, want each of the 2 once", n)
	}
}

// causesFixture is the report pages and the golden report with causes
// ("causes.json") that the report-page tests change to their case.
func causesFixture(t *testing.T) (*pages, *audit.Report) {
	t.Helper()
	p, err := newPages()
	if err != nil {
		t.Fatal(err)
	}
	r, err := audit.Decode(testsite.GoldenReports(t)["causes.json"])
	if err != nil {
		t.Fatal(err)
	}
	return p, r
}

// TestLaneRowsOfLanesThatDidNotRun: the lane details of an unreachable
// site say only what happened: the plain lane's one unanswered request,
// and a render lane that never ran neither "kept loading" nor made
// requests; a lane with redirects counts them as requests.
func TestLaneRowsOfLanesThatDidNotRun(t *testing.T) {
	t.Parallel()
	r := &audit.Report{Status: audit.StatusError}
	r.Lanes.Plain = audit.LaneReport{Outcome: audit.OutcomeError, Error: "connection refused"}
	r.Lanes.Render.LaneReport = audit.LaneReport{Outcome: audit.OutcomeSkipped}
	got := map[string][2]string{}
	for _, row := range laneRows(r) {
		got[row.Label] = [2]string{row.Plain, row.Render}
		for _, v := range []string{row.Plain, row.Render} {
			if strings.Contains(v, "kept loading") || strings.Contains(v, "plus redirects") {
				t.Errorf("%s: %q is not true of a lane that never got a page", row.Label, v)
			}
		}
	}
	want := map[string][2]string{
		"requests made":      {"1, unanswered", "none (it did not run)"},
		"network settled":    {"n/a", "n/a (no page loaded)"},
		"time to first byte": {"n/a", "n/a"},
	}
	for label, w := range want {
		if got[label] != w {
			t.Errorf("%s: %q, want %q", label, got[label], w)
		}
	}
	r.Lanes.Plain = audit.LaneReport{Outcome: audit.OutcomeOK, HTTPStatus: 200, Redirects: make([]compare.Redirect, 2)}
	for _, row := range laneRows(r) {
		if row.Label == "requests made" && row.Plain != "3 (2 redirects followed)" {
			t.Errorf("requests made with 2 redirects: %q", row.Plain)
		}
	}
}
