package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"lekta.dev/lekta/internal/apischema"
)

// The report a program reads is the one the API document describes: every
// golden report, and the reports of the verdict tests, are validated
// against the server's openapi.json by a JSON Schema 2020-12 validator.

var (
	apiDocOnce sync.Once
	apiDocRaw  []byte
	apiDocErr  error
)

// reportSchema checks b against the Report schema of openapi.json.
func validateReport(tb testing.TB, b []byte) error {
	tb.Helper()
	apiDocOnce.Do(func() {
		apiDocRaw, apiDocErr = os.ReadFile(filepath.Join("..", "server", "web", "openapi.json"))
	})
	if apiDocErr != nil {
		tb.Fatal(apiDocErr)
	}
	return apischema.Load(tb, apiDocRaw).Validate(tb, "/components/schemas/Report", b)
}

func TestGoldenReportsMatchOpenAPI(t *testing.T) {
	for name, b := range goldenReports(t) {
		if err := validateReport(t, b); err != nil {
			t.Errorf("%s does not match openapi.json: %v", name, err)
		}
	}
}

// causeCases is a finding's cause of every kind, as the API sends it.
var causeCases = []struct {
	name  string
	cause map[string]any
}{
	{"script", map[string]any{"kind": "script", "script_url": "http://shop.example/static/js/app.js", "line": 12, "column": 5,
		"page_time_ms": 340, "earlier_writers": 2, "blocked_scripts": 1}},
	{"inline script", map[string]any{"kind": "script", "script_url": "http://shop.example/", "inline": true, "line": 14}},
	{"request", map[string]any{"kind": "request", "script_url": "http://shop.example/app.js", "request_path": "/api/products", "share": 0.8}},
	{"parser", map[string]any{"kind": "parser", "element": "iframe", "source_line": 48}},
	{"soft 404", map[string]any{"kind": "soft_404", "mechanism": "render"}},
	{"redirect", map[string]any{"kind": "redirect", "mechanism": "meta_refresh", "target": "http://shop.example/new", "page_time_ms": 1200}},
}

// reportWithCause is the index golden report with one finding carrying cause.
func reportWithCause(tb testing.TB, cause map[string]any) []byte {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(goldenReports(tb)["index.json"], &m); err != nil {
		tb.Fatal(err)
	}
	m["findings"] = []any{map[string]any{"code": "title.render_only", "severity": "critical", "lane": "render",
		"message": "The title is set by JavaScript.", "cause": cause}}
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestFindingCausesMatchOpenAPI: a finding's cause of every kind is
// documented, and the document refuses a cause it does not describe.
func TestFindingCausesMatchOpenAPI(t *testing.T) {
	for _, tc := range causeCases {
		t.Run(tc.name, func(t *testing.T) {
			if err := validateReport(t, reportWithCause(t, tc.cause)); err != nil {
				t.Errorf("a finding caused by %s does not match openapi.json: %v", tc.name, err)
			}
		})
	}
	for name, bad := range map[string]map[string]any{
		"unknown field":   {"kind": "script", "script_url": "http://shop.example/app.js", "stack": "at f (app.js:1:2)"},
		"unknown kind":    {"kind": "magic"},
		"no kind":         {"script_url": "http://shop.example/app.js"},
		"line a string":   {"kind": "script", "line": "12"},
		"share above one": {"kind": "request", "share": 1.5},
	} {
		t.Run("refuses "+name, func(t *testing.T) {
			if err := validateReport(t, reportWithCause(t, bad)); err == nil {
				t.Errorf("openapi.json accepts a cause with %s: %v", name, bad)
			}
		})
	}
}
