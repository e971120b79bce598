package parity

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// audit is one of Lighthouse's SEO audits.
type audit string

// The audits compared.
const (
	documentTitle    audit = "document-title"
	httpStatusCode   audit = "http-status-code"
	isCrawlable      audit = "is-crawlable"
	canonical        audit = "canonical"
	hreflang         audit = "hreflang"
	metaDescription  audit = "meta-description"
	linkText         audit = "link-text"
	crawlableAnchors audit = "crawlable-anchors"
	robotsTxt        audit = "robots-txt"
)

var audits = []audit{documentTitle, httpStatusCode, isCrawlable, canonical, hreflang, metaDescription, linkText, crawlableAnchors, robotsTxt}

// lhCase is one case: a page, Lighthouse's answer on it, and, when Lekta
// answers otherwise on purpose, the row of docs/report.md that says why.
type lhCase struct {
	audit audit
	// from names the Lighthouse test, test page or source it is written from.
	from string
	page page
	pass bool // Lighthouse passes the page
	// differ is the key of the docs/report.md row ("lekta-differs: <key>") saying
	// why Lekta answers otherwise; "" when Lekta must agree.
	differ string
}

// page is what the two lanes fetch.
type page struct {
	url    string // default defaultURL
	status int    // default 200
	header map[string][]string
	// html is the document; " LISTENER" marks an element script attaches
	// an event listener to (no trace in the server HTML; the render lane
	// marks it, as render/listeners.go does).
	html   string
	robots *robotsFile // nil: robots.txt answers 404
}

// robotsFile is what /robots.txt answers; status 0 means the fetch fails.
type robotsFile struct {
	status  int
	content string
}

const (
	defaultURL = "https://example.com/page.html"
	// clock is the Date of every response (the unavailable_after dates of
	// Lighthouse's tests are judged in 2026).
	clock = "Mon, 05 Jan 2026 10:00:00 GMT"
	// mark is the attribute the render lane sets on elements with listeners.
	mark = "data-lekta-listener-5eed5eed5eed5eed"
)

// failCodes are the findings that mean an audit fails.
var failCodes = map[audit][]string{
	documentTitle:    {compare.CodeTitleMissing},
	httpStatusCode:   {compare.CodeStatusNotOK},
	canonical:        {compare.CodeCanonicalInvalid, compare.CodeCanonicalRelative, compare.CodeCanonicalConflicting, compare.CodeCanonicalHeaderMismatch, compare.CodeCanonicalRoot, compare.CodeCanonicalAlternate},
	hreflang:         {compare.CodeHreflangInvalid, compare.CodeHreflangSpaces, compare.CodeHreflangRelative, compare.CodeHreflangMissingHref},
	metaDescription:  {compare.CodeMetaDescriptionMissing},
	linkText:         {compare.CodeLinksNonDescriptive},
	crawlableAnchors: {compare.CodeLinksUncrawlable},
}

// lanes builds both lanes' view of p, extracted as an audit extracts them.
func lanes(p page) (plain, render *compare.Observed) {
	u := p.url
	if u == "" {
		u = defaultURL
	}
	status := p.status
	if status == 0 {
		status = http.StatusOK
	}
	snap := func(lane compare.Lane, body string) *compare.Snapshot {
		h := compare.Header{"Date": {clock}, "Content-Type": {"text/html; charset=utf-8"}}
		for k, v := range p.header {
			k = http.CanonicalHeaderKey(k)
			h[k] = append(h[k], v...)
		}
		return &compare.Snapshot{Lane: lane, RequestedURL: u, FinalURL: u, Status: status, Header: h,
			ContentType: "text/html", Body: []byte(body)}
	}
	ps := snap(compare.LanePlain, strings.ReplaceAll(p.html, " LISTENER", ""))
	rs := snap(compare.LaneRender, strings.ReplaceAll(p.html, " LISTENER", " "+mark))
	rs.Render = &compare.RenderDetails{Settled: true, ListenerMark: mark}
	return &compare.Observed{Snapshot: ps, Page: compare.Extract(ps)}, &compare.Observed{Snapshot: rs, Page: compare.Extract(rs)}
}

// lektaPasses is Lekta's answer to the audit on the page.
func lektaPasses(tb testing.TB, a audit, p page) bool {
	tb.Helper()
	switch a {
	case robotsTxt:
		res := fetchRobots(tb, p.robots)
		return res.Outcome != policy.RobotsUnreachable && (res.Robots == nil || !res.Robots.HasErrors())
	case isCrawlable:
		return crawlable(tb, p)
	}
	plain, render := lanes(p)
	for _, f := range compare.Diff(plain, render).Findings {
		if slices.Contains(failCodes[a], f.Code) {
			return false
		}
	}
	return true
}

// crawlable is Lekta's is-crawlable answer, from what the report shows:
// as Lighthouse asks whether any of the search bots it checks may index the
// page, some generic robot (LektaBot stands in for it) or Googlebot,
// Bingbot or archive.org_bot, whose rows the report's crawlers table has:
// robots.txt lets it fetch the page and no directive for it says noindex.
func crawlable(tb testing.TB, p page) bool {
	tb.Helper()
	res := fetchRobots(tb, p.robots)
	u := p.url
	if u == "" {
		u = defaultURL
	}
	target, err := url.Parse(u)
	if err != nil {
		tb.Fatal(err)
	}
	verdicts := map[string]compare.RobotsVerdict{}
	for _, c := range compare.Crawlers() {
		d, err := res.DecideURL(c.Token, target)
		verdicts[c.Token] = compare.RobotsVerdict{Known: true, Allowed: err == nil && d.Allowed}
	}
	plain, render := lanes(p)
	if d, err := res.DecideURL(policy.DefaultIdentity().Token, target); err == nil && d.Allowed && !render.Page.Noindex {
		return true
	}
	for _, row := range compare.SeenByCrawlers(verdicts, plain, render) {
		if slices.Contains([]string{"Googlebot", "Bingbot", "archive.org_bot"}, row.Token) && row.MayIndex {
			return true
		}
	}
	return false
}

// fetchRobots reads robots.txt as the audit does, from a local server
// answering f (nil: 404; status 0: the connection is dropped).
func fetchRobots(tb testing.TB, f *robotsFile) policy.RobotsResult {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case f == nil:
			http.NotFound(w, r)
		case f.status == 0:
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		default:
			w.WriteHeader(f.status)
			w.Write([]byte(f.content))
		}
	}))
	defer srv.Close()
	origin, err := url.Parse(srv.URL)
	if err != nil {
		tb.Fatal(err)
	}
	tr := &http.Transport{DialContext: (&net.Dialer{}).DialContext}
	defer tr.CloseIdleConnections()
	return policy.FetchRobots(context.Background(), policy.RobotsFetchConfig{Transport: tr}, origin, "LektaBot/0.1")
}

// TestLighthouseParity decides every case with Lekta and requires, per
// audit, at least 95% agreement with Lighthouse on the cases where Lekta
// should agree; a case listed as a deliberate difference must differ (or
// come off the list) and be explained in docs/report.md.
func TestLighthouseParity(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/report.md")
	if err != nil {
		t.Fatal(err)
	}
	cases := allCases()
	for _, a := range audits {
		t.Run(string(a), func(t *testing.T) {
			t.Parallel()
			var total, agree, deliberate int
			for _, c := range cases {
				if c.audit != a {
					continue
				}
				got := lektaPasses(t, a, c.page)
				if c.differ != "" {
					deliberate++
					if got == c.pass {
						t.Errorf("%s: listed as a deliberate difference (%s) but Lekta agrees with Lighthouse", c.from, c.differ)
					}
					if !strings.Contains(string(doc), "lekta-differs: "+c.differ) {
						t.Errorf("%s: the table of docs/report.md has no row for %q", c.from, c.differ)
					}
					continue
				}
				total++
				if got == c.pass {
					agree++
				} else {
					t.Logf("disagrees: %s: Lighthouse passes %v, Lekta %v", c.from, c.pass, got)
				}
			}
			if total < 5 {
				t.Fatalf("only %d cases", total)
			}
			pct := 100 * float64(agree) / float64(total)
			t.Logf("%s: %d of %d cases agree (%.1f%%), %d deliberate differences", a, agree, total, pct, deliberate)
			if pct < 95 {
				t.Errorf("%s agrees with Lighthouse on %.1f%% of cases (%d of %d), want at least 95%%", a, pct, agree, total)
			}
		})
	}
}
