package audit

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata/golden")

// sitePages are the test pages, each exercising one difference.
var sitePages = []string{
	"index.html", "js-title.html", "js-meta-description.html", "js-canonical.html",
	"noindex-added.html", "noindex-removed.html", "json-ld.html", "fetch-content.html",
	"links-added.html", "shadow.html", "spa.html", "images-analytics.html", "hash-router.html",
}

// TestAuditSitePages audits every test page once and checks the report
// against its golden file, and the site's request log against the promises:
// one GET per lane with the exact user agent, nothing blocked ever requested.
func TestAuditSitePages(t *testing.T) {
	e := mustEnv(t, nil)
	renderUA := browser.UserAgent()
	if !strings.HasSuffix(renderUA, " LektaBot/0.1 (+https://lekta.dev/bot)") || !strings.Contains(renderUA, "Chrome/") {
		t.Fatalf("render user agent %q is not the browser's own with the LektaBot suffix", renderUA)
	}
	for _, page := range sitePages {
		t.Run(page, func(t *testing.T) {
			r := e.audit(t, "http://shop.example/"+page, TriggerCLI)
			if r.Status != StatusComplete {
				t.Fatalf("status %s (%s); plain %s %q; render %s %q", r.Status, r.Reason,
					r.Lanes.Plain.Outcome, r.Lanes.Plain.Error, r.Lanes.Render.Outcome, r.Lanes.Render.Error)
			}
			wantOncePerLane(t, e.site, "shop.example", "/"+page)
			checkGolden(t, page, r)
		})
	}
	for _, h := range e.site.Hits() {
		switch {
		case h.Host != "shop.example":
			t.Errorf("a blocked host was requested: %s %s (%s)", h.Host, h.Path, h.UserAgent)
		case h.UserAgent == renderUA && (strings.HasPrefix(h.Path, "/img/") ||
			strings.HasPrefix(h.Path, "/fonts/") || strings.HasPrefix(h.Path, "/media/")):
			t.Errorf("the render lane requested a blocked resource: %s", h.Path)
		}
	}
}

// wantOncePerLane checks the site log for path on host: one request by
// the plain lane and one by the render lane, each with its exact user
// agent, and none with another user agent.
func wantOncePerLane(tb testing.TB, site *testsite.Site, host, path string) {
	tb.Helper()
	plainUA, renderUA := policy.DefaultIdentity().PlainUA(), browser.UserAgent()
	var plain, rendered int
	for _, h := range site.HitsOf(host, path) {
		switch h.UserAgent {
		case plainUA:
			plain++
		case renderUA:
			rendered++
		default:
			tb.Errorf("%s fetched with user agent %q", path, h.UserAgent)
		}
	}
	if plain != 1 || rendered != 1 {
		tb.Errorf("%s fetched %d times by the plain lane and %d by the render lane, want 1 and 1", path, plain, rendered)
	}
}

// volatile matches report values that change from run to run.
var volatile = map[string]bool{
	"id": true, "started_at": true, "duration_ms": true, "ttfb_ms": true, "page_time_ms": true,
	"timing": true,
}

var chromeVersion = regexp.MustCompile(`Chrome/[0-9.]+`)

// normalise replaces volatile values so reports compare across runs.
func normalise(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch {
			case volatile[k]:
				x[k] = "<" + k + ">"
			case k == "Last-Modified" || k == "Etag":
				x[k] = []any{"<" + k + ">"}
			default:
				x[k] = normalise(val, k)
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = normalise(x[i], key)
		}
		return x
	case string:
		return chromeVersion.ReplaceAllString(x, "Chrome/<version>")
	}
	return v
}

func checkGolden(t *testing.T, page string, r *Report) {
	t.Helper()
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(normalise(v, "")); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	path := filepath.Join("testdata", "golden", strings.TrimSuffix(page, ".html")+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./audit -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("report differs from %s (run go test ./audit -update and review the diff):\n%s", path, firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first differing line with a little context.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return ""
}

// hasFinding reports whether r has a finding with code.
func hasFinding(r *Report, code string) bool {
	for _, f := range r.Findings {
		if f.Code == code {
			return true
		}
	}
	return false
}
