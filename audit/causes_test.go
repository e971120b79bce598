package audit

import (
	"encoding/json"
	"strings"
	"testing"

	"lekta.dev/lekta/compare"
)

// TestAuditCauses audits the test site's pages for issue 24 and checks,
// from the report, which script, line and request each difference names.
func TestAuditCauses(t *testing.T) {
	e := mustEnv(t, nil)
	const site = "http://shop.example/causes/"
	type want struct {
		code    string
		kind    compare.CauseKind
		script  string // suffix of script_url
		inline  bool
		line    int
		request string
	}
	cases := []struct {
		page  string
		wants []want
	}{
		{"title-bundle.html", []want{{code: compare.CodeTitleRenderOnly, kind: compare.CauseScript, script: "/causes/bundle.js", line: 4}}},
		{"title-inline.html", []want{{code: compare.CodeTitleRenderOnly, kind: compare.CauseScript, script: "/causes/title-inline.html", inline: true, line: 11}}},
		{"title-injected.html", []want{{code: compare.CodeTitleRenderOnly, kind: compare.CauseScript, script: "/causes/late-title.js", line: 2}}},
		{"canonical-tagmanager.html", []want{{code: compare.CodeCanonicalChanged, kind: compare.CauseScript, script: "/causes/tm.js", line: 5}}},
		{"products.html", []want{
			{code: compare.CodeContentRenderOnly, kind: compare.CauseRequest, script: "/causes/shop.js", request: "/causes/products.json"},
			{code: compare.CodeLinksRenderOnly, kind: compare.CauseRequest, script: "/causes/shop.js", request: "/causes/products.json"},
		}},
	}
	for _, c := range cases {
		t.Run(c.page, func(t *testing.T) {
			r := e.audit(t, site+c.page, TriggerCLI)
			if r.Status != StatusComplete {
				t.Fatalf("status %s (%s)", r.Status, r.Reason)
			}
			wantOncePerLane(t, e.site, "shop.example", "/causes/"+c.page)
			for _, w := range c.wants {
				f := findingOf(r, w.code)
				if f == nil {
					t.Errorf("no finding %s; got %s", w.code, codesOf(r))
					continue
				}
				cs := f.Cause
				if cs == nil {
					t.Errorf("%s: no cause", w.code)
					continue
				}
				got, _ := json.Marshal(cs)
				if cs.Kind != w.kind || !strings.HasSuffix(cs.ScriptURL, w.script) || cs.Inline != w.inline || cs.RequestPath != w.request {
					t.Errorf("%s: cause %s, want kind %s, script …%s (inline %v), request %q", w.code, got, w.kind, w.script, w.inline, w.request)
				}
				if w.line > 0 && (cs.Line != w.line || cs.Column <= 0) {
					t.Errorf("%s: cause %s, want line %d and a column", w.code, got, w.line)
				}
				if cs.PageTimeMS == nil {
					t.Errorf("%s: cause %s has no page time", w.code, got)
				}
				if w.kind == compare.CauseRequest && cs.DataShare < 0.9 {
					t.Errorf("%s: data share %v, want (nearly) all of it in the one response", w.code, cs.DataShare)
				}
			}
		})
	}
	wantNoExtraRequests(t, e)
}

// wantNoExtraRequests checks the site's log: naming causes costs the site
// no request. Every subresource of the cause pages (scripts, the JSON, a
// redirect's target) was fetched by the render lane only, once per page
// that loads it.
func wantNoExtraRequests(t *testing.T, e *env) {
	t.Helper()
	renderUA := browser.UserAgent()
	loads := map[string]int{}
	for _, h := range e.site.HitsOf("shop.example", "/causes/") {
		if strings.HasSuffix(h.Path, ".html") && h.Path != "/causes/landing.html" {
			continue // the audited pages: wantOncePerLane
		}
		if h.UserAgent != renderUA || h.Method != "GET" {
			t.Errorf("%s %s fetched with user agent %q; only the render lane loads subresources", h.Method, h.Path, h.UserAgent)
		}
		loads[h.Path]++
	}
	for path, n := range loads {
		if want := subresourceLoads[path]; n != want {
			t.Errorf("%s fetched %d times, want %d", path, n, want)
		}
	}
}

// subresourceLoads is how many audited cause pages load each subresource.
var subresourceLoads = map[string]int{
	"/causes/bundle.js": 1, "/causes/loader.js": 1, "/causes/late-title.js": 1, "/causes/tm.js": 1,
	"/causes/fw.js": 1, "/causes/shop.js": 1, "/causes/products.json": 1,
	"/causes/router.js": 1, "/causes/history.js": 1, "/causes/landing.html": 2,
	"/causes/many.js": 1, "/causes/forge-title.js": 1, "/causes/setter-title.js": 1, "/causes/lang.js": 1,
}

// TestAuditCausesOfPages: the causes that are no script's write — a
// redirect only a browser follows, a head the parser ended early, the
// app's not-found route — named from the report.
func TestAuditCausesOfPages(t *testing.T) {
	e := mustEnv(t, nil)
	const site = "http://shop.example/causes/"
	cases := []struct {
		page, code string
		want       compare.Cause // the fields compared: kind, mechanism, target, element, source line
		atLeastMS  int64         // the page time is at least this
	}{
		{"script-redirect.html", compare.CodeRenderRedirectScript,
			compare.Cause{Kind: compare.CauseRedirect, Mechanism: compare.RedirectScript, Target: site + "landing.html"}, 300},
		{"meta-refresh.html", compare.CodeRenderRedirectMetaRefresh,
			compare.Cause{Kind: compare.CauseRedirect, Mechanism: compare.RedirectMetaRefresh, Target: site + "landing.html"}, 1000},
		{"history-path.html", compare.CodeRenderHistoryPath,
			compare.Cause{Kind: compare.CauseRedirect, Mechanism: compare.RedirectHistory, Target: "http://shop.example/catalogue/spring"}, 0},
		{"head-iframe.html", compare.CodeHeadEndedEarly,
			compare.Cause{Kind: compare.CauseParser, Element: "iframe", SourceLine: 6}, -1},
		{"head-iframe.html", compare.CodeCanonicalInBody,
			compare.Cause{Kind: compare.CauseParser, Element: "iframe", SourceLine: 6}, -1},
		{"app-missing.html", compare.CodeSoft404RenderOnly,
			compare.Cause{Kind: compare.CauseSoft404, Mechanism: "render", Element: "title"}, -1},
	}
	for _, c := range cases {
		t.Run(c.page+"/"+c.code, func(t *testing.T) {
			r := e.audit(t, site+c.page, TriggerCLI)
			wantOncePerLane(t, e.site, "shop.example", "/causes/"+c.page)
			f := findingOf(r, c.code)
			if f == nil {
				t.Fatalf("no finding %s; got %s", c.code, codesOf(r))
			}
			got, _ := json.Marshal(f.Cause)
			cs := f.Cause
			if cs == nil || cs.Kind != c.want.Kind || cs.Mechanism != c.want.Mechanism || cs.Target != c.want.Target ||
				cs.Element != c.want.Element || cs.SourceLine != c.want.SourceLine {
				t.Fatalf("cause %s, want %+v", got, c.want)
			}
			if c.atLeastMS >= 0 && (cs.PageTimeMS == nil || *cs.PageTimeMS < c.atLeastMS || *cs.PageTimeMS > c.atLeastMS+1000) {
				t.Errorf("cause %s: page time, want %d ms or a little more", got, c.atLeastMS)
			}
		})
	}
	wantNoExtraRequests(t, e)
}

// TestAuditCausesHostile: a page that fights the recorder and one that
// inserts ten thousand elements render, and what the report says of them
// is unknown or right, never the page's own words unescaped.
func TestAuditCausesHostile(t *testing.T) {
	e := mustEnv(t, nil)
	r := e.audit(t, "http://shop.example/causes/hostile.html", TriggerCLI)
	if r.Status != StatusComplete || r.Lanes.Render.Outcome != OutcomeOK {
		t.Fatalf("hostile page: status %s, render %s %q", r.Status, r.Lanes.Render.Outcome, r.Lanes.Render.Error)
	}
	f := findingOf(r, compare.CodeTitleRenderOnly)
	if f == nil {
		t.Fatalf("no title finding; got %s", codesOf(r))
	}
	if f.Cause == nil || f.Cause.Kind != compare.CauseScript {
		t.Fatalf("hostile title: cause %+v, want a script cause (known or unknown)", f.Cause)
	}
	if f.Cause.ScriptURL != "" && !strings.HasSuffix(f.Cause.ScriptURL, "/causes/hostile.html") {
		t.Errorf("hostile title: named %q, which did not write it", f.Cause.ScriptURL)
	}
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(text.String(), "\x1b\u2028") {
		t.Errorf("the text report carries the page's control characters:\n%q", text.String())
	}

	r = e.audit(t, "http://shop.example/causes/many-insertions.html", TriggerCLI)
	if r.Status != StatusComplete || r.Lanes.Render.Outcome != OutcomeOK {
		t.Fatalf("many insertions: status %s, render %s %q", r.Status, r.Lanes.Render.Outcome, r.Lanes.Render.Error)
	}
	f = findingOf(r, compare.CodeContentRenderOnly)
	if f == nil || f.Cause == nil || !strings.HasSuffix(f.Cause.ScriptURL, "/causes/many.js") || f.Cause.Line != 6 {
		t.Errorf("many insertions: content finding %+v, want many.js line 6", f)
	}
}

// TestAuditCausesRecorder: no page can find, flood, forge or break the
// write recorder (issue 33). A page that hunts the window's properties for
// it, floods it and rewrites its script URLs; a page whose prototypes
// throw at whoever copies an object; and a page whose script sets only
// <html lang>, whose heading is no script's.
func TestAuditCausesRecorder(t *testing.T) {
	e := mustEnv(t, nil)
	const site = "http://shop.example/causes/"
	for _, c := range []struct{ page, script string }{
		{"recorder-forge.html", "/causes/forge-title.js"},
		{"recorder-setter.html", "/causes/setter-title.js"},
	} {
		t.Run(c.page, func(t *testing.T) {
			r := e.audit(t, site+c.page, TriggerCLI)
			if r.Status != StatusComplete || r.Lanes.Render.Outcome != OutcomeOK {
				t.Fatalf("status %s, render %s %q", r.Status, r.Lanes.Render.Outcome, r.Lanes.Render.Error)
			}
			f := findingOf(r, compare.CodeTitleChanged)
			if f == nil {
				t.Fatalf("no title finding; got %s", codesOf(r))
			}
			got, _ := json.Marshal(f.Cause)
			if f.Cause == nil || f.Cause.Kind != compare.CauseScript || !strings.HasSuffix(f.Cause.ScriptURL, c.script) || f.Cause.Line != 2 {
				t.Errorf("title cause %s, want %s line 2", got, c.script)
			}
			var text strings.Builder
			if err := WriteText(&text, r); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text.String(), "forged") {
				t.Errorf("the report repeats what the page forged:\n%s", text.String())
			}
		})
	}
	t.Run("lang-only.html", func(t *testing.T) {
		r := e.audit(t, site+"lang-only.html", TriggerCLI)
		f := findingOf(r, compare.CodeLangRenderOnly)
		if f == nil || f.Cause == nil || !strings.HasSuffix(f.Cause.ScriptURL, "/causes/lang.js") {
			t.Errorf("lang finding %+v, want one caused by lang.js", f)
		}
		for _, f := range r.Findings {
			if strings.HasPrefix(f.Code, "h1.") && f.Cause != nil {
				got, _ := json.Marshal(f.Cause)
				t.Errorf("%s has the cause %s; no script wrote the heading", f.Code, got)
			}
		}
		if !strings.Contains(codesOf(r), "h1.") {
			t.Errorf("no h1 finding (the plain lane reads the <noscript> heading); got %s", codesOf(r))
		}
	})
}

func findingOf(r *Report, code string) *compare.Finding {
	for i := range r.Findings {
		if r.Findings[i].Code == code {
			return &r.Findings[i]
		}
	}
	return nil
}

func codesOf(r *Report) string {
	var codes []string
	for _, f := range r.Findings {
		codes = append(codes, f.Code)
	}
	return strings.Join(codes, ", ")
}
