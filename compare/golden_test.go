package compare

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// siteDir holds the test site shared with the lane and audit tests.
const siteDir = "../testdata/site"

// siteHost is the fake hostname the test site is served under.
const siteHost = "http://shop.example"

// mustSitePage returns a plain-lane snapshot of a test site page as the
// server sends it.
func mustSitePage(tb testing.TB, name string) *Snapshot {
	tb.Helper()
	body, err := os.ReadFile(filepath.Join(siteDir, name))
	if err != nil {
		tb.Fatalf("read test page: %v", err)
	}
	u := siteHost + "/" + name
	return &Snapshot{
		Lane:         LanePlain,
		RequestedURL: u,
		FinalURL:     u,
		Status:       200,
		Header:       Header{"Content-Type": {"text/html; charset=utf-8"}},
		ContentType:  "text/html",
		Body:         body,
		Bytes:        int64(len(body)),
		Charset:      "utf-8",
	}
}

// sitePages lists the HTML pages of the test site.
func sitePages(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(siteDir, "*.html"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no test site pages in %s (%v)", siteDir, err)
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names
}

// TestExtractGolden compares the plain-lane extract of every test site page
// with its golden file; -update rewrites them.
func TestExtractGolden(t *testing.T) {
	for _, name := range sitePages(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := json.MarshalIndent(Extract(mustSitePage(t, name)), "", "  ")
			if err != nil {
				t.Fatalf("marshal page: %v", err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".html")+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden file (run go test ./compare -update): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("extract of %s differs from %s (run go test ./compare -update and review the diff)\ngot:\n%s", name, golden, got)
			}
		})
	}
}
