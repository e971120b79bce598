package compare

import (
	"strings"
	"testing"
	"time"
)

// timeMS is a millisecond of page time, for short case tables.
const timeMS = time.Millisecond

// The client redirect codes, written out as the stable names they are.
const (
	codeRedirectScript      = "render.redirect_script"
	codeRedirectMetaRefresh = "render.redirect_meta_refresh"
	codeHistoryPath         = "render.history_path"
)

// redirected builds a pair whose browser ended at to through one client
// redirect; plainDoc lets a case carry the meta refresh in the server HTML.
func redirected(plainDoc, mechanism, to string, at time.Duration, navigations int) func() lanePair {
	return pair(plainDoc, doc("", ""), func(p, r *Snapshot) {
		r.FinalURL = to
		r.Render.Navigations = navigations
		r.Render.ClientRedirects = []ClientRedirect{{Mechanism: mechanism, From: "http://shop.example/page", To: to, PageTime: at}}
	})
}

// redirectCause is the cause a client redirect finding carries.
func redirectCause(mechanism, to string, ms int64) Cause {
	return Cause{Kind: CauseRedirect, Mechanism: mechanism, Target: to, PageTimeMS: &ms}
}

// clientRedirectCases are renders that ended on another URL because of the
// page itself.
var clientRedirectCases = []diffCase{
	{name: "script redirect",
		in:   redirected(doc("", ""), "script", "http://shop.example/new", 1200*timeMS, 1),
		want: []finding{{code: codeRedirectScript, lane: LaneRender, sev: SeverityWarning}},
		check: all(wantCause(codeRedirectScript, redirectCause("script", "http://shop.example/new", 1200)),
			messageHas(codeRedirectScript, "“http://shop.example/new”", "after 1.2 s of page time", "GPTBot", "ClaudeBot", "PerplexityBot", "Google"))},
	{name: "instant meta refresh",
		in:   redirected(doc(`<meta http-equiv="refresh" content="0; url=/new">`, ""), "meta_refresh", "http://shop.example/new", 300*timeMS, 1),
		want: []finding{{code: codeRedirectMetaRefresh, lane: LaneRender, sev: SeverityWarning}},
		// The page's own delay says when, not the page time the render
		// saw the navigation at (to within a grant: issue 32).
		check: all(wantCause(codeRedirectMetaRefresh, Cause{Kind: CauseRedirect, Mechanism: "meta_refresh", Target: "http://shop.example/new"}),
			messageHas(codeRedirectMetaRefresh, "“http://shop.example/new” as soon as the page loaded", "permanent", "AI crawlers"))},
	{name: "delayed meta refresh",
		in:   redirected(doc(`<meta http-equiv="Refresh" content="5;URL='/new'">`, ""), "meta_refresh", "http://shop.example/new", 5300*timeMS, 1),
		want: []finding{{code: codeRedirectMetaRefresh, lane: LaneRender}},
		check: all(wantCause(codeRedirectMetaRefresh, redirectCause("meta_refresh", "http://shop.example/new", 5300)),
			messageHas(codeRedirectMetaRefresh, "5 s after the page loaded", "temporary"))},
	{name: "history replaceState to another path",
		in:   redirected(doc("", ""), "history", "http://shop.example/app/home", 800*timeMS, 0),
		want: []finding{{code: codeHistoryPath, lane: LaneRender, sev: SeverityWarning}},
		check: all(wantCause(codeHistoryPath, redirectCause("history", "http://shop.example/app/home", 800)),
			messageHas(codeHistoryPath, "“http://shop.example/app/home”", "after 800 ms of page time", "first URL"))},
	{name: "a redirect's message and cause say its time in one unit",
		in:   redirected(doc("", ""), "script", "http://shop.example/new", 250*timeMS, 1),
		want: []finding{{code: codeRedirectScript, lane: LaneRender, sev: SeverityWarning}},
		check: all(wantCause(codeRedirectScript, redirectCause("script", "http://shop.example/new", 250)),
			messageHas(codeRedirectScript, "after 250 ms of page time"), causeWordsHave(codeRedirectScript, "after 250 ms of page time"))},
	{name: "navigation of an unknown kind keeps the general finding",
		in:   redirected(doc("", ""), "frame", "http://shop.example/other", 2*time.Second, 1),
		want: []finding{{code: CodeRenderNavigated, lane: LaneRender, sev: SeverityWarning}},
		check: all(wantCause(CodeRenderNavigated, Cause{Kind: CauseRedirect, Target: "http://shop.example/other", PageTimeMS: pageTimeMS(2 * time.Second)}),
			messageHas(CodeRenderNavigated, "“http://shop.example/other”", "after 2 s of page time"))},
}

// movedCases are pages a redirect took the browser off, so the rendered
// page is another page (issue 32): the redirect comes first, and what
// differs between the lanes is a consequence of it, said so.
var movedCases = []diffCase{
	{name: "instant meta refresh to a page with other content",
		in: pair(`<!doctype html><html lang="en"><head><title>Moved</title><meta http-equiv="refresh" content="0; url=/new"></head><body><p>This page has moved.</p></body></html>`,
			doc("", "<h2>The new page</h2><p>"+manyWords+"</p>"+`<a href="/a">A</a><a href="/b">B</a><a href="/c">C</a>`), func(p, r *Snapshot) {
				r.FinalURL = "http://shop.example/new"
				r.Render.Navigations = 1
				r.Render.ClientRedirects = []ClientRedirect{{Mechanism: RedirectMetaRefresh, From: "http://shop.example/page", To: "http://shop.example/new", PageTime: 10 * timeMS}}
			}),
		want: []finding{{code: codeRedirectMetaRefresh, lane: LaneRender, sev: SeverityCritical}},
		some: true,
		check: all(messageHas(codeRedirectMetaRefresh, "permanent", "Crawlers that stay on this page get its server HTML"),
			consequencesOf(codeRedirectMetaRefresh, CauseRedirect, CodeContentRenderOnly, CodeLinksRenderOnly, CodeTitleChanged, CodeH1RenderOnly),
			messageHas(CodeContentRenderOnly, "A consequence of the redirect, not of JavaScript", "a meta refresh sent the browser to “http://shop.example/new”"),
			messageHas(CodeTitleChanged, "and that page has the title “Kettle”, where this page's server HTML has “Moved”"),
			verdictLeads(codeRedirectMetaRefresh))},
	{name: "history redirect of a client-rendered app",
		in: pair(`<!doctype html><html lang="en"><head><title>Shop</title></head><body><div id="root"></div></body></html>`,
			doc("", "<p>"+manyWords+"</p>"), func(p, r *Snapshot) {
				r.FinalURL = "http://shop.example/products"
				r.Render.ClientRedirects = []ClientRedirect{{Mechanism: RedirectHistory, From: "http://shop.example/old", To: "http://shop.example/products", PageTime: 30 * timeMS}}
			}),
		want: []finding{{code: codeHistoryPath, lane: LaneRender, sev: SeverityCritical}},
		some: true,
		check: all(consequencesOf(codeHistoryPath, CauseRedirect, CodeContentRenderOnly, CodeTitleChanged), verdictLeads(codeHistoryPath),
			messageHas(CodeContentRenderOnly, "a script moved the address, with the history API, to “http://shop.example/products”"))},
}

// consequencesOf checks that each of codes is an info finding that names
// redirect as what it follows from, with a cause of kind, and that no
// finding says JavaScript added anything.
func consequencesOf(redirect string, kind CauseKind, codes ...string) func(testing.TB, Result) {
	return func(tb testing.TB, res Result) {
		tb.Helper()
		for _, code := range codes {
			var got *Finding
			for i := range res.Findings {
				if res.Findings[i].Code == code {
					got = &res.Findings[i]
				}
			}
			switch {
			case got == nil:
				tb.Errorf("no %s finding", code)
			case got.ConsequenceOf != redirect || got.Severity != SeverityInfo || got.Cause == nil || got.Cause.Kind != kind:
				tb.Errorf("%s: consequence of %q, severity %s, cause %+v; want an info consequence of %s with a %s cause", code, got.ConsequenceOf, got.Severity, got.Cause, redirect, kind)
			}
		}
		for _, f := range res.Findings {
			if strings.Contains(f.Message, "by JavaScript") || strings.Contains(f.Message, "only after JavaScript runs") || strings.Contains(f.Message, "Serve this content in the HTML") {
				tb.Errorf("%s says JavaScript made it: %s", f.Code, f.Message)
			}
		}
	}
}

// verdictLeads checks that the verdict opens with the finding of code.
func verdictLeads(code string) func(testing.TB, Result) {
	return func(tb testing.TB, res Result) {
		tb.Helper()
		lead, ok := Lead(res.Findings)
		if !ok || lead.Code != code {
			tb.Errorf("the verdict leads with %s, want %s", lead.Code, code)
		}
	}
}

// TestRedirectFirst checks pages a redirect moved the browser off.
func TestRedirectFirst(t *testing.T) {
	t.Parallel()
	runDiffCases(t, movedCases)
}

// TestClientRedirects checks the findings for script, history and meta
// refresh redirects.
func TestClientRedirects(t *testing.T) {
	t.Parallel()
	runDiffCases(t, clientRedirectCases)
}

// TestNest: consequences go under the first finding of their code, each
// once; one whose finding is missing stays on its own.
func TestNest(t *testing.T) {
	t.Parallel()
	fs := []Finding{
		{Code: codeRedirectScript}, {Code: CodeTitleChanged, ConsequenceOf: codeRedirectScript},
		{Code: codeRedirectScript}, {Code: CodeH1Changed, ConsequenceOf: "render.unknown"},
	}
	got := Nest(fs)
	if len(got) != 3 || len(got[0].Consequences) != 1 || got[0].Consequences[0].Code != CodeTitleChanged ||
		len(got[1].Consequences) != 0 || got[2].Code != CodeH1Changed {
		t.Errorf("Nest: %+v", got)
	}
}

// causeWordsHave checks that the cause of the code's finding, in words,
// holds each part.
func causeWordsHave(code string, parts ...string) func(testing.TB, Result) {
	return func(tb testing.TB, res Result) {
		tb.Helper()
		show := CauseShow{Script: func(s string) string { return s }, Text: func(s string) string { return s }}
		for _, f := range res.Findings {
			if f.Code != code {
				continue
			}
			words := CauseWords(f.Cause, show)
			for _, p := range parts {
				if !strings.Contains(words, p) {
					tb.Errorf("%s cause lacks %q: %s", code, p, words)
				}
			}
			return
		}
		tb.Errorf("no %s finding; got %s", code, codesOf(res))
	}
}
