package compare

import (
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
		check: all(wantCause(codeRedirectMetaRefresh, redirectCause("meta_refresh", "http://shop.example/new", 300)),
			messageHas(codeRedirectMetaRefresh, "“http://shop.example/new”", "after 0.3 s of page time", "permanent", "AI crawlers"))},
	{name: "delayed meta refresh",
		in:   redirected(doc(`<meta http-equiv="Refresh" content="5;URL='/new'">`, ""), "meta_refresh", "http://shop.example/new", 5300*timeMS, 1),
		want: []finding{{code: codeRedirectMetaRefresh, lane: LaneRender}},
		check: all(wantCause(codeRedirectMetaRefresh, redirectCause("meta_refresh", "http://shop.example/new", 5300)),
			messageHas(codeRedirectMetaRefresh, "after 5.3 s of page time", "5 s", "temporary"))},
	{name: "history replaceState to another path",
		in:   redirected(doc("", ""), "history", "http://shop.example/app/home", 800*timeMS, 0),
		want: []finding{{code: codeHistoryPath, lane: LaneRender, sev: SeverityInfo}},
		check: all(wantCause(codeHistoryPath, redirectCause("history", "http://shop.example/app/home", 800)),
			messageHas(codeHistoryPath, "“http://shop.example/app/home”", "after 0.8 s of page time", "first URL"))},
	{name: "navigation of an unknown kind keeps the general finding",
		in:   redirected(doc("", ""), "frame", "http://shop.example/other", 2*time.Second, 1),
		want: []finding{{code: CodeRenderNavigated, lane: LaneRender, sev: SeverityWarning}},
		check: all(wantCause(CodeRenderNavigated, Cause{Kind: CauseRedirect, Target: "http://shop.example/other", PageTimeMS: pageTimeMS(2 * time.Second)}),
			messageHas(CodeRenderNavigated, "“http://shop.example/other”", "after 2 s of page time"))},
}

// TestClientRedirects checks the findings for script, history and meta
// refresh redirects.
func TestClientRedirects(t *testing.T) {
	t.Parallel()
	runDiffCases(t, clientRedirectCases)
}
