package compare

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// doc builds a small complete document; head and body are added to a
// baseline that produces no findings when both lanes have it.
// The baseline has a meta description unless head brings its own.
func doc(head, body string) string {
	if !strings.Contains(head, `name="description"`) {
		head = baseDescription + head
	}
	return `<!doctype html><html lang="en"><head><title>Kettle</title>` + head +
		`</head><body><h1>Kettle</h1><p>A blue kettle.</p>` + body + `</body></html>`
}

// baseDescription is the baseline's meta description.
const baseDescription = `<meta name="description" content="A blue stoneware kettle, made by hand.">`

// noDescription is doc without the baseline description.
func noDescription(d string) string { return strings.Replace(d, baseDescription, "", 1) }

// lanePair is one Diff input: the two lanes' snapshots (nil for a missing lane).
type lanePair struct{ plain, render *Snapshot }

// pair builds snapshots of two documents; mod may adjust them.
func pair(plainDoc, renderDoc string, mod func(p, r *Snapshot)) func() lanePair {
	return func() lanePair {
		p, r := snap(LanePlain, plainDoc), snap(LaneRender, renderDoc)
		r.Render = &RenderDetails{Settled: true}
		if mod != nil {
			mod(p, r)
		}
		return lanePair{p, r}
	}
}

// observed wraps a snapshot for Diff, extracting its page.
func observed(s *Snapshot) *Observed {
	if s == nil {
		return nil
	}
	return &Observed{Snapshot: s, Page: Extract(s)}
}

// finding is an expected finding: code, and lane and severity when set.
type finding struct {
	code string
	lane Lane
	sev  Severity
}

var manyWords = strings.Repeat("pottery glaze kiln wheel ", 10)

// diffCase is one inline plain/render pair and what Diff must say about it.
type diffCase struct {
	name  string
	in    func() lanePair
	want  []finding // exact set of codes; lane and severity checked when set
	some  bool      // want is a subset, other findings may appear
	rows  map[string]Change
	check func(tb testing.TB, res Result)
}

// diffCases are inline plain/render pairs, one or a few differences each.
var diffCases = []diffCase{
	{name: "identical", in: pair(doc("", ""), doc("", ""), nil),
		check: func(tb testing.TB, res Result) {
			eq(tb, "verdict", res.Verdict, Verdict{Summary: "AI crawlers that do not run JavaScript see what a browser shows: all of the rendered text.", TextShare: 1, LinkShare: 1})
		}},
	{name: "title changed",
		in:   pair(doc("", ""), strings.Replace(doc("", ""), "<title>Kettle</title>", "<title>Blue Kettle</title>", 1), nil),
		want: []finding{{code: CodeTitleChanged, sev: SeverityWarning}}, rows: map[string]Change{"title": ChangeChanged}},
	{name: "title removed by script",
		in:   pair(doc("", ""), strings.Replace(doc("", ""), "<title>Kettle</title>", "", 1), nil),
		want: []finding{{code: CodeTitlePlainOnly}}, rows: map[string]Change{"title": ChangePlainOnly}},
	{name: "no title in either lane",
		in:   pair(strings.Replace(doc("", ""), "<title>Kettle</title>", "", 1), strings.Replace(doc("", ""), "<title>Kettle</title>", "", 1), nil),
		want: []finding{{code: CodeTitleMissing, lane: ""}}},
	{name: "meta description removed",
		in:   pair(doc(`<meta name="description" content="A blue kettle for every stove.">`, ""), noDescription(doc("", "")), nil),
		want: []finding{{code: CodeMetaDescriptionPlainOnly, sev: SeverityInfo}}, rows: map[string]Change{"meta_description": ChangePlainOnly}},
	{name: "meta description changed",
		in:   pair(doc(`<meta name="description" content="A blue kettle for every stove.">`, ""), doc(`<meta name="description" content="A red kettle for every stove.">`, ""), nil),
		want: []finding{{code: CodeMetaDescriptionChanged}}, rows: map[string]Change{"meta_description": ChangeChanged}},
	{name: "canonical added by script",
		in:   pair(doc("", ""), doc(`<link rel="canonical" href="http://shop.example/k">`, ""), nil),
		want: []finding{{code: CodeCanonicalRenderOnly, sev: SeverityWarning}}, rows: map[string]Change{"canonical": ChangeRenderOnly}},
	{name: "canonical removed by script",
		in:   pair(doc(`<link rel="canonical" href="http://shop.example/k">`, ""), doc("", ""), nil),
		want: []finding{{code: CodeCanonicalPlainOnly}}, rows: map[string]Change{"canonical": ChangePlainOnly}},
	{name: "Link header canonical differs from the element",
		in: pair(doc(`<link rel="canonical" href="http://shop.example/a">`, ""), doc(`<link rel="canonical" href="http://shop.example/a">`, ""), func(p, r *Snapshot) {
			p.Header = Header{"Link": {`<http://shop.example/b>; rel="canonical"`}}
			r.Header = p.Header
		}),
		want: []finding{{code: CodeCanonicalHeaderMismatch, lane: ""}}},
	{name: "conflicting canonicals in the rendered page",
		in:   pair(doc(`<link rel="canonical" href="http://shop.example/a">`, ""), doc(`<link rel="canonical" href="http://shop.example/a"><link rel="canonical" href="http://shop.example/b">`, ""), nil),
		want: []finding{{code: CodeCanonicalConflicting, lane: LaneRender}}},
	{name: "noindex and nofollow in both lanes",
		in:   pair(doc(`<meta name="robots" content="noindex, nofollow">`, ""), doc(`<meta name="robots" content="noindex,nofollow">`, ""), nil),
		want: []finding{{code: CodeRobotsNoindex, sev: SeverityInfo}, {code: CodeRobotsNofollow}},
		rows: map[string]Change{"meta_robots": ChangeChanged}},
	{name: "nofollow removed by script",
		in:   pair(doc(`<meta name="robots" content="nofollow">`, ""), doc("", ""), nil),
		want: []finding{{code: CodeRobotsNofollowPlainOnly, sev: SeverityWarning}}},
	{name: "robots meta changed without index change",
		in:   pair(doc(`<meta name="robots" content="max-snippet:10">`, ""), doc(`<meta name="robots" content="max-snippet:50">`, ""), nil),
		want: []finding{{code: CodeRobotsChanged}}},
	{name: "noindex from X-Robots-Tag in the plain lane only",
		in:   pair(doc("", ""), doc("", ""), func(p, r *Snapshot) { p.Header = Header{"X-Robots-Tag": {"noindex"}} }),
		want: []finding{{code: CodeRobotsNoindexPlainOnly, sev: SeverityCritical}, {code: CodeXRobotsTagChanged}}},
	{name: "X-Robots-Tag for another bot differs",
		in:   pair(doc("", ""), doc("", ""), func(p, r *Snapshot) { r.Header = Header{"X-Robots-Tag": {"googlebot: noindex"}} }),
		want: []finding{{code: CodeXRobotsTagChanged}, {code: CodeRobotsBotNoindex, lane: LaneRender}}},
	{name: "bot-specific robots meta added by script",
		in:   pair(doc("", ""), doc(`<meta name="GPTBot" content="noindex">`, ""), nil),
		want: []finding{{code: CodeRobotsBotMetaChanged}, {code: CodeRobotsBotNoindex, lane: LaneRender}}, rows: map[string]Change{"bot_robots": ChangeRenderOnly}},
	{name: "lang added by script",
		in:   pair(strings.Replace(doc("", ""), ` lang="en"`, "", 1), doc("", ""), nil),
		want: []finding{{code: CodeLangRenderOnly}}, rows: map[string]Change{"lang": ChangeRenderOnly}},
	{name: "lang removed by script",
		in:   pair(doc("", ""), strings.Replace(doc("", ""), ` lang="en"`, "", 1), nil),
		want: []finding{{code: CodeLangPlainOnly}}},
	{name: "lang changed, case ignored",
		in:   pair(strings.Replace(doc("", ""), `"en"`, `"EN"`, 1), strings.Replace(doc("", ""), `"en"`, `"de"`, 1), nil),
		want: []finding{{code: CodeLangChanged}}},
	{name: "lang differs only in case",
		in: pair(strings.Replace(doc("", ""), `"en"`, `"EN"`, 1), doc("", ""), nil), rows: map[string]Change{}},
	{name: "hreflang added by script",
		in:   pair(doc("", ""), doc(alternates("de"), ""), nil),
		want: []finding{{code: CodeHreflangRenderOnly}}, rows: map[string]Change{"hreflang": ChangeRenderOnly}},
	{name: "hreflang removed by script",
		in:   pair(doc(alternates("de"), ""), doc("", ""), nil),
		want: []finding{{code: CodeHreflangPlainOnly}}},
	{name: "hreflang changed",
		in:   pair(doc(alternates("de"), ""), doc(alternates("fr"), ""), nil),
		want: []finding{{code: CodeHreflangChanged}}, rows: map[string]Change{"hreflang": ChangeChanged}},
	{name: "h1 removed by script",
		in:   pair(doc("", ""), strings.Replace(doc("", ""), "<h1>Kettle</h1>", "", 1), nil),
		want: []finding{{code: CodeH1PlainOnly}}, rows: map[string]Change{"h1": ChangePlainOnly, "headings": ChangePlainOnly, "word_count": ChangeChanged}},
	{name: "h1 changed",
		in:   pair(doc("", ""), strings.Replace(doc("", ""), "<h1>Kettle</h1>", "<h1>Kettles</h1>", 1), nil),
		want: []finding{{code: CodeH1Changed, sev: SeverityInfo}}, rows: map[string]Change{"h1": ChangeChanged, "headings": ChangeChanged, "word_count": ChangeChanged}},
	{name: "subheading removed by script",
		in:   pair(doc("", "<h2>Care</h2>"), doc("", ""), nil),
		want: []finding{{code: CodeHeadingsPlainOnly}}},
	{name: "JSON-LD type removed by script",
		in:   pair(doc(`<script type="application/ld+json">{"@type":"Product"}</script>`, ""), doc("", ""), nil),
		want: []finding{{code: CodeJSONLDPlainOnly}}, rows: map[string]Change{"json_ld_types": ChangePlainOnly}},
	{name: "invalid JSON-LD in both lanes",
		in:   pair(doc(`<script type="application/ld+json">{"@type":</script>`, ""), doc(`<script type="application/ld+json">{"@type":</script>`, ""), nil),
		want: []finding{{code: CodeJSONLDInvalid, lane: ""}}},
	{name: "invalid JSON-LD injected by script",
		in:   pair(doc("", ""), doc(`<script type="application/ld+json">{oops}</script>`, ""), nil),
		want: []finding{{code: CodeJSONLDInvalid, lane: LaneRender}}},
	{name: "one link added by script is a warning",
		in:   pair(doc("", `<a href="/a">a</a><a href="/b">b</a>`), doc("", `<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a>`), nil),
		want: []finding{{code: CodeLinksRenderOnly, sev: SeverityWarning}}, rows: map[string]Change{"links": ChangeChanged, "word_count": ChangeChanged},
		check: func(tb testing.TB, res Result) {
			if res.Verdict.LinkShare < 0.66 || res.Verdict.LinkShare > 0.67 {
				tb.Errorf("link share %v, want 2/3", res.Verdict.LinkShare)
			}
		}},
	{name: "links removed by script",
		in:   pair(doc("", `<a href="/a">a</a><a href="/b#x">b</a>`), doc("", `<a href="/b">b</a>`), nil),
		want: []finding{{code: CodeLinksPlainOnly, sev: SeverityInfo}}, rows: map[string]Change{"links": ChangeChanged, "word_count": ChangeChanged}},
	{name: "same links in another order are the same",
		in:   pair(doc("", `<a href="/a">x</a> <a href="/b">y</a>`), doc("", `<a href="/b">x</a> <a href="/a">y</a>`), nil),
		rows: map[string]Change{"links": ChangeSame}},
	{name: "some text added by script is a warning",
		in:   pair(doc("", "<p>"+manyWords+"</p>"), doc("", "<p>"+manyWords+"</p><p>"+strings.Repeat("extra ", 12)+"</p>"), nil),
		want: []finding{{code: CodeContentRenderOnly, sev: SeverityWarning}}, rows: map[string]Change{"word_count": ChangeChanged}},
	{name: "text removed by script",
		in:   pair(doc("", "<p>"+manyWords+"</p>"), doc("", ""), nil),
		want: []finding{{code: CodeContentPlainOnly}}, rows: map[string]Change{"word_count": ChangeChanged}},
	{name: "noscript text counts only in the plain lane",
		in:   pair(doc("", "<noscript>"+manyWords+"</noscript>"), doc("", "<noscript>"+manyWords+"</noscript>"), nil),
		want: []finding{{code: CodeContentPlainOnly}}},
	{name: "Open Graph added by script",
		in:   pair(doc("", ""), doc(`<meta property="og:title" content="Kettle">`, ""), nil),
		want: []finding{{code: CodeOpenGraphRenderOnly}}, rows: map[string]Change{"open_graph": ChangeRenderOnly}},
	{name: "Open Graph removed by script",
		in:   pair(doc(`<meta property="og:title" content="Kettle">`, ""), doc("", ""), nil),
		want: []finding{{code: CodeOpenGraphPlainOnly}}},
	{name: "Open Graph changed",
		in:   pair(doc(`<meta property="og:title" content="Kettle">`, ""), doc(`<meta property="og:title" content="Kettles">`, ""), nil),
		want: []finding{{code: CodeOpenGraphChanged}}},
	{name: "image without alt in the rendered page",
		in:   pair(doc("", ""), doc("", `<img src="/x.png">`), nil),
		want: []finding{{code: CodeImagesMissingAlt, lane: LaneRender}}, rows: map[string]Change{"images_missing_alt": ChangeRenderOnly}},
	{name: "status differs and one lane failed",
		in:   pair(doc("", ""), doc("", ""), func(p, r *Snapshot) { r.Status = 403 }),
		want: []finding{{code: CodeStatusDiffers, sev: SeverityCritical}, {code: CodeStatusNotOK, lane: LaneRender}},
		rows: map[string]Change{"status": ChangeChanged}},
	{name: "status differs, both successful",
		in:   pair(doc("", ""), doc("", ""), func(p, r *Snapshot) { r.Status = 203 }),
		want: []finding{{code: CodeStatusDiffers, sev: SeverityWarning}}},
	{name: "not found in both lanes",
		in:   pair(doc("", ""), doc("", ""), func(p, r *Snapshot) { p.Status, r.Status = 404, 404 }),
		want: []finding{{code: CodeStatusNotOK, lane: ""}},
		check: func(tb testing.TB, res Result) {
			// Issue 14 point 2: the same status in both lanes is no difference.
			if strings.Contains(res.Verdict.Summary, "differ") {
				tb.Errorf("verdict %q claims the lanes differ", res.Verdict.Summary)
			}
			eq(tb, "message", res.Findings[0].Message, "The page answers 404 to every visitor, the plain fetch and the browser alike; crawlers do not index a page that does not answer 200.")
		}},
	{name: "slow first byte in the plain lane",
		in:   pair(doc("", ""), doc("", ""), func(p, r *Snapshot) { p.Timings.TTFB = 20 * time.Second }),
		want: []finding{{code: CodePageSlow, lane: LanePlain, sev: SeverityWarning}},
		check: func(tb testing.TB, res Result) {
			eq(tb, "message", res.Findings[0].Message, "The server took 20 s to send the first byte of the page to the plain fetch; AI crawlers are likely to give up long before that.")
		}},
	{name: "slow first byte in both lanes",
		in: pair(doc("", ""), doc("", ""), func(p, r *Snapshot) {
			p.Timings.TTFB, r.Timings.TTFB = 6*time.Second, 7*time.Second
		}),
		want: []finding{{code: CodePageSlow, lane: ""}}},
	{name: "first byte at the threshold is not slow",
		in:   pair(doc("", ""), doc("", ""), func(p, r *Snapshot) { p.Timings.TTFB = SlowTTFB }),
		want: nil},
	{name: "redirected differently",
		in:   pair(doc("", ""), doc("", ""), func(p, r *Snapshot) { r.FinalURL = "http://shop.example/browser" }),
		want: []finding{{code: CodeFinalURLDiffers}}, rows: map[string]Change{"final_url": ChangeChanged}},
	{name: "plain lane missing",
		in:   func() lanePair { return lanePair{nil, pair("", doc("", `<a href="/a">a</a>`), nil)().render} },
		want: []finding{{code: CodePlainMissing, lane: LanePlain}},
		check: func(tb testing.TB, res Result) {
			eq(tb, "shares", [2]float64{res.Verdict.TextShare, res.Verdict.LinkShare}, [2]float64{0, 0})
			for _, row := range res.Diff {
				if row.Plain != nil {
					tb.Errorf("row %s: plain value %#v for a missing lane", row.Field, row.Plain)
				}
				if row.Change != ChangeRenderOnly && row.Change != ChangeSame {
					tb.Errorf("row %s: change %s with the plain lane missing", row.Field, row.Change)
				}
			}
		}},
	{name: "render lane missing",
		in:   func() lanePair { return lanePair{snap(LanePlain, doc("", "")), nil} },
		want: []finding{{code: CodeRenderMissing, lane: LaneRender}},
		rows: map[string]Change{"status": ChangePlainOnly, "final_url": ChangePlainOnly, "title": ChangePlainOnly, "meta_description": ChangePlainOnly, "lang": ChangePlainOnly,
			"h1": ChangePlainOnly, "headings": ChangePlainOnly, "word_count": ChangePlainOnly}},
	{name: "both lanes missing",
		in: func() lanePair { return lanePair{} },
		check: func(tb testing.TB, res Result) {
			eq(tb, "rows", res.Diff, []FieldDiff{})
			eq(tb, "verdict", res.Verdict.Summary, "Neither lane produced a document, so there is nothing to compare.")
		}},
	{name: "plain body truncated, not HTML",
		in: pair(doc("", ""), doc("", ""), func(p, r *Snapshot) {
			p.Truncated, p.ContentType = true, "application/json"
		}),
		some: true, want: []finding{{code: CodePlainTruncated, lane: LanePlain}, {code: CodePlainNotHTML, lane: LanePlain}, {code: CodeTitleRenderOnly}}},
	{name: "render body truncated",
		in:   pair(doc("", ""), doc("", ""), func(p, r *Snapshot) { r.Truncated = true }),
		want: []finding{{code: CodeRenderTruncated, lane: LaneRender}}},
	{name: "render lane details",
		in: pair(doc("", ""), doc("", ""), func(p, r *Snapshot) {
			r.FinalURL = "http://shop.example/moved"
			r.Render = &RenderDetails{
				Blocked: map[string]int{"robots": 2, "image": 3, "method": 2, "websocket": 1},
				BlockedURLs: []BlockedRequest{{URL: "http://shop.example/js/app.js", Reason: "robots", Rule: "Disallow: /js/"}, {URL: "http://shop.example/a.png", Reason: "image"},
					{URL: "http://shop.example/cart", Reason: "method", Rule: "POST"}},
				ConsoleErrors:      []string{"Failed to load resource"},
				Exceptions:         []string{"TypeError: x is undefined"},
				FailedRequests:     []FailedRequest{{URL: "http://shop.example/api", Reason: "net::ERR_FAILED"}},
				Navigations:        1,
				Settled:            false,
				CookiesRefused:     3,
				CredentialsRefused: 1,
				RefusedFeatures:    []string{"indexeddb", "webgl"},
			}
		}),
		want: []finding{{code: CodeRenderConsoleErrors, lane: LaneRender}, {code: CodeRenderExceptions, lane: LaneRender, sev: SeverityWarning},
			{code: CodeRenderBlockedRobots, lane: LaneRender}, {code: CodeRenderBlockedMethod, lane: LaneRender, sev: SeverityWarning},
			{code: CodeRenderCookiesRefused, lane: LaneRender}, {code: CodeRenderFailedRequests, lane: LaneRender},
			{code: CodeRenderNotSettled, lane: LaneRender}, {code: CodeRenderNavigated, lane: LaneRender},
			{code: CodeRenderWebSocket, lane: LaneRender, sev: SeverityWarning}, {code: CodeRenderRefusedFeatures, lane: LaneRender, sev: SeverityWarning}},
		check: func(tb testing.TB, res Result) {
			for _, f := range res.Findings {
				if f.Code == CodeRenderWebSocket && !strings.Contains(f.Message, "content that needs a WebSocket is invisible to Googlebot as well") {
					tb.Errorf("websocket message: %s", f.Message)
				}
				if f.Code == CodeRenderRefusedFeatures && !strings.Contains(f.Message, "indexeddb, webgl") {
					tb.Errorf("refused-features message does not name them: %s", f.Message)
				}
				if f.Code == CodeRenderBlockedRobots && !strings.Contains(f.Message, "Disallow: /js/") {
					tb.Errorf("blocked-robots message does not name the rule: %s", f.Message)
				}
				if f.Code == CodeRenderBlockedMethod && !strings.Contains(f.Message, "POST “http://shop.example/cart”") {
					tb.Errorf("blocked-method message does not name the request: %s", f.Message)
				}
				if f.Code == CodeRenderCookiesRefused && !strings.Contains(f.Message, "3 cookies and 1 credential") {
					tb.Errorf("cookies-refused message does not count: %s", f.Message)
				}
			}
		}},
	{name: "render lane still working at its budget",
		in: pair(doc("", ""), doc("", ""), func(p, r *Snapshot) {
			r.Render = &RenderDetails{Settled: true, SettledBy: "budget", Budget: 5 * time.Second, PageTime: 5 * time.Second}
		}),
		want: []finding{{code: CodeRenderBudget, lane: LaneRender}},
		check: func(tb testing.TB, res Result) {
			if f := res.Findings[0]; !strings.Contains(f.Message, "later than 5 s of page time") {
				tb.Errorf("budget message does not name the budget: %s", f.Message)
			}
		}},
	{name: "render lane cut by a request that never finished",
		in: pair(doc("", ""), doc("", ""), func(p, r *Snapshot) {
			r.Render = &RenderDetails{SettledBy: "deadline", PendingRequests: []string{"Fetch http://shop.example/api/slow"}}
		}),
		want: []finding{{code: CodeRenderNotSettled, lane: LaneRender}},
		check: func(tb testing.TB, res Result) {
			if f := res.Findings[0]; !strings.Contains(f.Message, "http://shop.example/api/slow") {
				tb.Errorf("not-settled message does not name the request: %s", f.Message)
			}
		}},
	{name: "deep nesting in both lanes",
		in:   pair(doc("", strings.Repeat("<div>", 600)+"deep"+strings.Repeat("</div>", 600)), doc("", strings.Repeat("<div>", 600)+"deep"+strings.Repeat("</div>", 600)), nil),
		want: []finding{{code: CodeHTMLTooDeep, lane: ""}}},
	{name: "too many links for the report",
		in:   pair(doc("", strings.Repeat(`<a href="/x">x</a>`, 2100)), doc("", strings.Repeat(`<a href="/x">x</a>`, 2100)), nil),
		want: []finding{{code: CodeExtractTruncated, lane: ""}}},
}

// alternates is a valid hreflang set for the page: itself in English, an
// x-default and the page in lang at /lang/.
func alternates(lang string) string {
	return `<link rel="alternate" hreflang="en" href="http://shop.example/page">` +
		`<link rel="alternate" hreflang="x-default" href="http://shop.example/page">` +
		`<link rel="alternate" hreflang="` + lang + `" href="http://shop.example/` + lang + `/">`
}

// runDiffCase diffs one case.
func runDiffCase(in func() lanePair) Result {
	lp := in()
	return Diff(observed(lp.plain), observed(lp.render))
}

// TestDiff checks rows, findings and verdicts of inline document pairs.
func TestDiff(t *testing.T) {
	t.Parallel()
	runDiffCases(t, diffCases)
}

// allDiffCases are the inline cases of every file, for the tests that
// check the code table against what the cases produce.
func allDiffCases() []diffCase {
	return slices.Concat(diffCases, soft404Cases, clientRedirectCases, movedCases, shippedCases)
}

// runDiffCases runs inline cases as parallel subtests.
func runDiffCases(t *testing.T, cases []diffCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkDiffCase(t, tc)
		})
	}
}

// checkDiffCase diffs one case and checks rows, codes, lanes, severities.
func checkDiffCase(tb testing.TB, tc diffCase) {
	tb.Helper()
	res := runDiffCase(tc.in)
	if tc.rows != nil {
		assertRows(tb, res, tc.rows)
	}
	var codes []string
	for _, w := range tc.want {
		codes = append(codes, w.code)
	}
	if tc.some {
		for _, c := range codes {
			if !slices.ContainsFunc(res.Findings, func(f Finding) bool { return f.Code == c }) {
				tb.Errorf("missing finding %s; got %s", c, codesOf(res))
			}
		}
	} else {
		assertCodes(tb, res, codes)
	}
	for _, w := range tc.want {
		for _, f := range res.Findings {
			if f.Code != w.code {
				continue
			}
			if w.sev != "" && f.Severity != w.sev {
				tb.Errorf("%s: severity %s, want %s", f.Code, f.Severity, w.sev)
			}
			if (w.lane != "" || strings.HasPrefix(w.code, "render.") || strings.HasPrefix(w.code, "plain.")) && f.Lane != w.lane {
				tb.Errorf("%s: lane %q, want %q", f.Code, f.Lane, w.lane)
			}
		}
	}
	if tc.check != nil {
		tc.check(tb, res)
	}
}

// TestDiffLaneScopes checks that conditions found in both lanes are one
// finding without a lane.
func TestDiffLaneScopes(t *testing.T) {
	t.Parallel()
	for _, tc := range diffCases {
		for _, w := range tc.want {
			if w.lane != "" || tc.some {
				continue
			}
			switch w.code {
			case CodeTitleMissing, CodeCanonicalHeaderMismatch, CodeJSONLDInvalid, CodeStatusNotOK, CodeHTMLTooDeep, CodeExtractTruncated:
				res := runDiffCase(tc.in)
				for _, f := range res.Findings {
					if f.Code == w.code && f.Lane != "" {
						t.Errorf("%s: %s has lane %q, want none", tc.name, f.Code, f.Lane)
					}
				}
			}
		}
	}
}

// TestDiffDeterministic checks that the same input gives the same output,
// byte for byte, and that findings are sorted by severity.
func TestDiffDeterministic(t *testing.T) {
	t.Parallel()
	in := diffCases[slices.IndexFunc(diffCases, func(c diffCase) bool { return c.name == "render lane details" })].in
	first, err := json.Marshal(runDiffCase(in))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, _ := json.Marshal(runDiffCase(in))
		if string(again) != string(first) {
			t.Fatalf("Diff output changed between runs:\n%s\n%s", first, again)
		}
	}
	res := runDiffCase(in)
	if !slices.IsSortedFunc(res.Findings, func(a, b Finding) int { return severityRank(a.Severity) - severityRank(b.Severity) }) {
		t.Errorf("findings not sorted by severity: %s", codesOf(res))
	}
}

// TestDiffDecodedPages checks that pages read back from JSON (without the
// word and link sets) still give the same findings.
func TestDiffDecodedPages(t *testing.T) {
	t.Parallel()
	for _, page := range []string{"links-added.html", "spa.html", "index.html"} {
		t.Run(page, func(t *testing.T) {
			t.Parallel()
			want := siteDiff(t, page)
			plain, render := mustSitePage(t, page), mustRenderedPage(t, page)
			got := Diff(&Observed{Snapshot: plain, Page: roundTrip(t, Extract(plain))}, &Observed{Snapshot: render, Page: roundTrip(t, Extract(render))})
			var wantCodes []string
			for _, f := range want.Findings {
				wantCodes = append(wantCodes, f.Code)
			}
			assertCodes(t, got, wantCodes)
			if d := got.Verdict.TextShare - want.Verdict.TextShare; d > 0.2 || d < -0.2 {
				t.Errorf("text share %v from decoded pages, %v from extracted", got.Verdict.TextShare, want.Verdict.TextShare)
			}
			eq(t, "link share", got.Verdict.LinkShare, want.Verdict.LinkShare)
		})
	}
}

// roundTrip encodes a page as JSON and decodes it again.
func roundTrip(tb testing.TB, p *Page) *Page {
	tb.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		tb.Fatal(err)
	}
	var out Page
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatal(err)
	}
	return &out
}

// TestDiffObservedWithoutPage checks that Diff extracts a missing Page.
func TestDiffObservedWithoutPage(t *testing.T) {
	t.Parallel()
	plain, render := mustSitePage(t, "js-title.html"), mustRenderedPage(t, "js-title.html")
	got := Diff(&Observed{Snapshot: plain}, &Observed{Snapshot: render})
	want := siteDiff(t, "js-title.html")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Diff without pages:\n%+v\nwant\n%+v", got, want)
	}
}

// TestFindingCodes checks the code table and that every code in it is
// produced by at least one test case, so none is dead.
func TestFindingCodes(t *testing.T) {
	t.Parallel()
	codes := FindingCodes()
	if !slices.IsSortedFunc(codes, func(a, b CodeInfo) int { return strings.Compare(a.Code, b.Code) }) {
		t.Error("FindingCodes is not sorted")
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if seen[c.Code] {
			t.Errorf("duplicate code %s", c.Code)
		}
		seen[c.Code] = true
		if parts := strings.Split(c.Code, "."); len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			t.Errorf("code %q is not of the form area.name", c.Code)
		}
		if c.Explanation == "" || severityRank(c.Severity) > 2 || c.Severity == "" {
			t.Errorf("code %s: incomplete description %+v", c.Code, c)
		}
	}
	produced := map[string]bool{}
	for _, tc := range allDiffCases() {
		for _, f := range runDiffCase(tc.in).Findings {
			produced[f.Code] = true
		}
	}
	for _, tc := range siteDiffCases {
		for _, f := range siteDiff(t, tc.page).Findings {
			produced[f.Code] = true
		}
	}
	for _, tc := range checkCases {
		bad := tc.badDoc()
		for _, f := range runDiffCase(pair(bad, bad, func(p, r *Snapshot) { dated(p, tc.hdr); dated(r, tc.hdr) })).Findings {
			produced[f.Code] = true
		}
	}
	for _, c := range pipelineCodes {
		produced[c] = true
	}
	for _, c := range codes {
		if !produced[c.Code] {
			t.Errorf("no test produces %s", c.Code)
		}
	}
	for code := range produced {
		if !seen[code] {
			t.Errorf("produced code %s is not in the table", code)
		}
	}
	FindingCodes()[0].Code = "changed"
	if FindingCodes()[0].Code == "changed" {
		t.Error("FindingCodes returns shared storage")
	}
}

// TestFindingSeverityNeverExceedsTable checks that no finding is more
// severe than its code's documented severity.
func TestFindingSeverityNeverExceedsTable(t *testing.T) {
	t.Parallel()
	for _, tc := range allDiffCases() {
		for _, f := range runDiffCase(tc.in).Findings {
			info, _ := LookupCode(f.Code)
			if severityRank(f.Severity) < severityRank(info.Severity) {
				t.Errorf("%s: %s finding %s is more severe than documented (%s)", tc.name, f.Severity, f.Code, info.Severity)
			}
		}
	}
}

// TestVerdictSummary pins the verdict sentence for typical situations.
func TestVerdictSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		res  func(tb testing.TB) Result
		want string
	}{
		{"same page", func(tb testing.TB) Result { return siteDiff(tb, "index.html") },
			"AI crawlers that do not run JavaScript see what a browser shows: all of the rendered text and all of its links."},
		{"script-only app", func(tb testing.TB) Result { return siteDiff(tb, "spa.html") },
			"AI crawlers that do not run JavaScript miss most of this page: the server HTML has none of the rendered text and none of its links."},
		{"critical signal", func(tb testing.TB) Result { return siteDiff(tb, "js-canonical.html") },
			"AI crawlers that do not run JavaScript see all of the rendered text, but the server HTML and the rendered page differ in the canonical URL."},
		{"smaller differences", func(tb testing.TB) Result { return siteDiff(tb, "json-ld.html") },
			"AI crawlers that do not run JavaScript see all of the rendered text; 1 smaller difference is listed below."},
		{"browser shows less", func(tb testing.TB) Result {
			return runDiffCase(pair(doc("", "<p>"+manyWords+"</p>"), doc("", ""), nil))
		}, "AI crawlers that do not run JavaScript see all of the rendered text, and more: most of the server HTML's text is not shown in the browser."},
		{"plain lane missing", func(tb testing.TB) Result { return Diff(nil, observed(mustRenderedPage(tb, "index.html"))) },
			"Only the browser produced a document, so what AI crawlers receive is unknown."},
		{"render lane missing", func(tb testing.TB) Result { return Diff(observed(mustSitePage(tb, "index.html")), nil) },
			"Only the plain fetch produced a document, so it could not be compared with what a browser shows."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eq(t, "summary", tc.res(t).Verdict.Summary, tc.want)
		})
	}
}

// TestDiffNotHTMLHasNoPageFindings: a PDF in both lanes is reported as not
// HTML, not as a page without a title.
func TestDiffNotHTMLHasNoPageFindings(t *testing.T) {
	pdf := func(lane Lane) *Observed {
		return &Observed{Snapshot: &Snapshot{Lane: lane, Status: 200, ContentType: "application/pdf", FinalURL: "http://shop.example/a.pdf"}}
	}
	res := Diff(pdf(LanePlain), pdf(LaneRender))
	var codes []string
	for _, f := range res.Findings {
		codes = append(codes, f.Code)
	}
	if !slices.Contains(codes, CodePlainNotHTML) || slices.Contains(codes, CodeTitleMissing) {
		t.Errorf("findings %v: want %s and no %s", codes, CodePlainNotHTML, CodeTitleMissing)
	}
}

// TestLinksCountedOnce: the links row and the links finding count the same
// thing, distinct addresses, so a page that repeats a link does not show
// one number in the table and another in the finding.
func TestLinksCountedOnce(t *testing.T) {
	t.Parallel()
	links := `<a href="/a">A kettle</a><a href="/a">The same kettle</a><a href="/b">A teapot</a><a href="/c">A cup</a>`
	res := runDiffCase(pair(doc("", `<a href="/c">A cup</a>`), doc("", links), nil))
	var row *FieldDiff
	for i := range res.Diff {
		if res.Diff[i].Field == "links" {
			row = &res.Diff[i]
		}
	}
	if row == nil || row.Render != 3 || row.Plain != 1 {
		t.Fatalf("links row %+v, want 1 plain and 3 rendered (distinct addresses)", row)
	}
	for _, f := range res.Findings {
		if f.Code == CodeLinksRenderOnly {
			if !strings.Contains(f.Message, "2 links appear only after JavaScript runs (66% of the rendered page's 3 distinct links)") {
				t.Errorf("finding %q does not count the table's 3 distinct links", f.Message)
			}
			return
		}
	}
	t.Errorf("no %s finding: %+v", CodeLinksRenderOnly, res.Findings)
}
