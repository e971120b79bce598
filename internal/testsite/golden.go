package testsite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GoldenReportsDir is the absolute path of audit/testdata/golden, the
// golden reports of the test site's pages.
func GoldenReportsDir() string {
	return filepath.Join(Dir(), "..", "..", "audit", "testdata", "golden")
}

// GoldenReports reads every golden report, named by file, with its
// volatile placeholders ("<id>", "<started_at>", …) replaced by plausible
// values, so that it decodes as a report and renders as one.
func GoldenReports(tb testing.TB) map[string][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(GoldenReportsDir(), "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no golden reports: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		s := string(b)
		for ph, v := range map[string]string{
			`"<id>"`: `"AAAAAAAAAAAAAAAAAAAAAAAAAA"`, `"<started_at>"`: `"2026-12-01T10:00:00Z"`,
			`"<duration_ms>"`: `1234`, `"<ttfb_ms>"`: `12`, `"<page_time_ms>"`: `180`, `"<Last-Modified>"`: `"Tue, 01 Dec 2026 10:00:00 GMT"`,
			`"<Etag>"`:   `"\"abc\""`,
			`"<timing>"`: `{"context_ms":1,"navigate_ms":40,"document_request_ms":20,"load_ms":45,"settle_ms":30,"snapshot_ms":10,"page_time_ms":180}`,
		} {
			s = strings.ReplaceAll(s, ph, v)
		}
		out[filepath.Base(f)] = []byte(s)
	}
	return out
}
