package server

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// snakeRE is a JSON or Go name standing as a word: lower-case words
// joined by underscores ("not_found"), not part of a dotted name
// ("archive.org_bot", a crawler's token) or a number ("x86_64").
var snakeRE = regexp.MustCompile(`(?:^|[\s(“"'/])([a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)+)(?:[\s)”"',;:.!?]|$)`)

// goValueRE is a value as Go's fmt writes it: a duration such as 1m0s or
// 1h0m0s, a map, a pointer to a struct, a formatting error, nil.
var goValueRE = regexp.MustCompile(`\b\d+h\d+m\d+(?:\.\d+)?s\b|\b\d+m\d+(?:\.\d+)?s\b|map\[|&\{|%!|<nil>|0xc0`)

// dataRE is what the words come from the audited page, not from Lekta:
// an address, a quoted value, a code in brackets as the text report
// marks finding codes, or a code span in backticks.
var dataRE = regexp.MustCompile("\\S*://\\S*|“[^”]*”|\\[[a-z0-9_]+\\.[a-z0-9_.]+\\]|`[^`]*`")

// internalNames returns the JSON or Go names in a text for people.
// allowed are names the text may use (an API's own field names).
func internalNames(text string, allowed ...string) []string {
	text = dataRE.ReplaceAllString(text, " ")
	var out []string
	var found []string
	for _, m := range snakeRE.FindAllStringSubmatch(text, -1) {
		found = append(found, m[1])
	}
	for _, m := range append(found, goValueRE.FindAllString(text, -1)...) {
		if !slices.Contains(allowed, m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// htmlWords is the text of a page for people: its text nodes outside
// <code>, <pre>, <script> and <style>, and its title and aria-label
// attributes. Values copied from the audited page are in <code> or in
// quotes; addresses are dropped by internalNames.
func htmlWords(tb testing.TB, page string) string {
	tb.Helper()
	z := html.NewTokenizer(strings.NewReader(page))
	var b strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			switch t.Data {
			case "code", "pre", "script", "style":
				if t.Type == html.StartTagToken {
					skip++
				}
			}
			for _, a := range t.Attr {
				if a.Key == "title" || a.Key == "aria-label" || a.Key == "placeholder" {
					b.WriteString(" " + a.Val + " ")
				}
			}
		case html.EndTagToken:
			switch z.Token().Data {
			case "code", "pre", "script", "style":
				skip--
			}
		case html.TextToken:
			if skip == 0 {
				b.WriteString(" " + string(z.Text()) + " ")
			}
		}
	}
}

// TestNoInternalNames renders every golden report as text and as the
// report page, every member page and every API error this server gives,
// and fails on a snake_case name or a Go-formatted value outside a code
// span: people read words, not JSON keys or fmt's %v.
func TestNoInternalNames(t *testing.T) {
	reports := map[string]*audit.Report{}
	for name, b := range testsite.GoldenReports(t) {
		r, err := audit.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		reports[name] = r
	}
	// A run the limits refused, and one whose robots.txt was not found.
	limited := &audit.Report{Schema: audit.Schema, ID: "BBBBBBBBBBBBBBBBBBBBBBBBBB", URL: "http://shop.example/", Status: audit.StatusRateLimited,
		Trigger: audit.TriggerCLI, Reason: audit.LimitSentence("shop.example", "1/1m", 42*time.Second), RetryAfterS: 42, Limit: "1/1m"}
	reports["rate limited"] = limited
	noRobots := *reports["index.json"]
	rb := *noRobots.Robots
	rb.Outcome, rb.HTTPStatus = "not_found", 404
	noRobots.Robots = &rb
	reports["robots.txt not found"] = &noRobots

	p, err := newPages()
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range reports {
		t.Run("report "+name, func(t *testing.T) {
			var text strings.Builder
			if err := audit.WriteText(&text, r); err != nil {
				t.Fatal(err)
			}
			if bad := internalNames(text.String()); len(bad) > 0 {
				t.Errorf("the text report shows %q:\n%s", bad, text.String())
			}
			rec := httptest.NewRecorder()
			p.render(rec, nil, http.StatusOK, "report", newReportView(r))
			if bad := internalNames(htmlWords(t, rec.Body.String())); len(bad) > 0 {
				t.Errorf("the report page shows %q", bad)
			}
		})
	}

	h := newMemberHarness(t, memberOpts{runs: 1})
	t.Run("member pages", func(t *testing.T) { memberPageNames(t, h) })
	t.Run("API errors", func(t *testing.T) { apiErrorNames(t, h) })
}

// memberPageNames renders the sign-in page, the dashboard, a site page
// with history of every kind and the forms' errors.
func memberPageNames(t *testing.T, h *memberHarness) {
	_, auth := h.member("words@example.com")
	key := strings.TrimPrefix(auth["Authorization"], "Bearer ")
	s := h.saveSite(auth, `{"url":"http://shop.example/index.html","schedule":"weekly"}`)
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	share := 0.42
	for i, e := range []records.Entry{
		{Trigger: "scheduled", Status: "complete", TextShare: &share, LinkShare: &share, Critical: 1,
			Changes: changesJSON(t, schedule.Changes{First: true})},
		{Trigger: "scheduled", Status: "skipped", Rule: "Disallow: /", Changes: changesJSON(t, schedule.Changes{StatusBefore: "complete"})},
		{Trigger: "member", Status: "rate_limited", Changes: changesJSON(t, schedule.Changes{})},
		{Trigger: "scheduled", Status: "complete", TextShare: &share, LinkShare: &share, Regression: true,
			Changes: changesJSON(t, schedule.Changes{Fields: []schedule.FieldChange{{Lane: "plain", Field: "meta_description", Before: "Kettles", After: "Kettles on sale"}},
				Appeared: []schedule.FindingKey{{Code: "title.render_only", Severity: "critical"}}, Resolved: []schedule.FindingKey{{Code: "robots.disallowed", Severity: "critical"}},
				StatusBefore: "skipped", TextShareBefore: &share, Regression: true, Reasons: []string{"a new critical finding"}})},
	} {
		due := base.Add(time.Duration(i) * time.Hour)
		e.ID, e.SiteID, e.DueAt, e.RanAt, e.ReportID = records.HistoryID(s.ID, due), s.ID, due, due.Add(time.Second), strings.Repeat("C", 25)+string(rune('A'+i))
		if _, err := h.db.AddEntry(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	b := &browser{h: h, cookies: map[string]string{}}
	_, signIn := b.send("GET", "/members", nil)
	pages := map[string]string{"sign-in": signIn}
	_, pages["sign-in refused"] = b.send("POST", "/members/sign-in", url.Values{"key": {"lekta_wrong"}, "csrf": {csrfOf(t, signIn)}})
	_, page := b.send("GET", "/members", nil)
	b.send("POST", "/members/sign-in", url.Values{"key": {key}, "csrf": {csrfOf(t, page)}})
	_, pages["dashboard"] = b.send("GET", "/members/sites", nil)
	tok := csrfOf(t, pages["dashboard"])
	_, pages["site"] = b.send("GET", "/members/sites/"+s.ID, nil)
	_, pages["add with a bad schedule"] = b.send("POST", "/members/sites", url.Values{"csrf": {tok}, "url": {"http://shop.example/"}, "schedule": {"every so often"}})
	_, pages["add too often"] = b.send("POST", "/members/sites", url.Values{"csrf": {tok}, "url": {"http://shop.example/"}, "schedule": {"10m"}})
	_, pages["change to a refused address"] = b.send("POST", "/members/sites/"+s.ID, url.Values{"csrf": {tok}, "url": {"http://10.0.0.1/"}, "schedule": {"weekly"}})
	other := h.saveSite(auth, `{"url":"http://shop.example/other.html","schedule":"weekly"}`)
	_, pages["change to a saved address"] = b.send("POST", "/members/sites/"+other.ID, url.Values{"csrf": {tok}, "url": {"http://shop.example/index.html"}, "schedule": {"weekly"}})
	b.send("POST", "/members/sites", url.Values{"csrf": {tok}, "url": {"http://shop.example/index.html"}, "schedule": {"weekly"}})
	_, pages["site saved again"] = b.send("GET", "/members/sites/"+s.ID, nil)
	_, pages["remove confirmation"] = b.send("GET", "/members/sites/"+s.ID+"/delete", nil)
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		if bad := internalNames(htmlWords(t, pages[name])); len(bad) > 0 {
			t.Errorf("the %s page shows %q", name, bad)
		}
	}
}

// apiErrorNames sends the API what it refuses and reads every error
// message it answered in this test. The API's own field names (url,
// webhook_url, …) are words a client writes, so they may stand in them.
func apiErrorNames(t *testing.T, h *memberHarness) {
	_, auth := h.member("errors@example.com")
	plain := map[string]string{"Content-Type": "application/json"}
	s := h.saveSite(auth, `{"url":"http://shop.example/","schedule":"weekly"}`)
	for _, rq := range []struct {
		method, path, body string
		hdr                map[string]string
	}{
		{"POST", "/api/v1/audits", `[1]`, plain},
		{"POST", "/api/v1/audits", `{"url":1}`, plain},
		{"POST", "/api/v1/audits", `{"url":"x","extra_field":1}`, plain},
		{"POST", "/api/v1/audits", `{"url":`, plain},
		{"POST", "/api/v1/audits", `{}`, plain},
		{"POST", "/api/v1/audits", `{"url":"ftp://shop.example/"}`, plain},
		{"POST", "/api/v1/audits", `{"url":"http://10.0.0.1/"}`, plain},
		{"POST", "/api/v1/audits", `{"url":"http://shop.example/` + strings.Repeat("a", 3000) + `"}`, plain},
		{"POST", "/api/v1/audits", `url=x`, map[string]string{"Content-Type": "text/plain"}},
		{"GET", "/api/v1/audits/AAAAAAAAAAAAAAAAAAAAAAAAAA?wait=soon", "", nil},
		{"GET", "/api/v1/audits/AAAAAAAAAAAAAAAAAAAAAAAAAA", "", nil},
		{"POST", "/api/v1/verify", `{"line":5}`, plain},
		{"POST", "/api/v1/sites", `[]`, auth},
		{"POST", "/api/v1/sites", `{"url":"http://shop.example/","schedule":"10m"}`, auth},
		{"POST", "/api/v1/sites", `{"url":"http://shop.example/","schedule":"often"}`, auth},
		{"POST", "/api/v1/sites", `{"url":"http://shop.example/","schedule":"daily","webhook_url":"http://10.0.0.8/"}`, auth},
		{"POST", "/api/v1/sites", `{"schedule":"daily"}`, auth},
		{"POST", "/api/v1/sites", `{"url":"http://shop.example/","schedule":"daily"}`, auth},
		{"PATCH", "/api/v1/sites/" + s.ID, `{"schedule":7}`, auth},
		{"GET", "/api/v1/sites/" + s.ID + "/history?limit=x", "", auth},
		{"GET", "/api/v1/sites/" + s.ID + "/history?before=x", "", auth},
		{"GET", "/api/v1/sites/s_nothing", "", auth},
		{"GET", "/api/v1/sites", "", map[string]string{"Authorization": "Bearer lekta_nope"}},
		{"POST", "/api/v1/sites/" + s.ID + "/audits", "", auth},
		{"POST", "/api/v1/sites/" + s.ID + "/audits", "", auth},
	} {
		h.do(rq.method, rq.path, rq.body, rq.hdr)
	}
	allowed := apiFieldNames(t)
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ex := range h.exchange {
		if ex.status < 400 || !strings.HasPrefix(ex.path, "/api/") {
			continue
		}
		var e apiErr
		if err := json.Unmarshal(ex.body, &e); err != nil {
			t.Errorf("%s %s %d: not an error object: %s", ex.method, ex.path, ex.status, ex.body)
			continue
		}
		n++
		if bad := internalNames(e.Error.Message, allowed...); len(bad) > 0 || strings.Contains(e.Error.Message, "json:") {
			t.Errorf("%s %s %d says %q: %q", ex.method, ex.path, ex.status, e.Error.Message, bad)
		}
	}
	if n < 20 {
		t.Errorf("only %d error answers read", n)
	}
}

// apiFieldNames is every property name and parameter of the OpenAPI
// document: the names an API client writes.
func apiFieldNames(tb testing.TB) []string {
	tb.Helper()
	b, err := webFS.ReadFile("web/openapi.json")
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "properties" {
					for name := range x.(map[string]any) {
						names = append(names, name)
					}
				}
				if k == "name" {
					if s, ok := x.(string); ok {
						names = append(names, s)
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		tb.Fatal(err)
	}
	walk(doc)
	return names
}
