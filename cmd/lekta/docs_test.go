package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"lekta.dev/lekta/compare"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the finding-code table in docs/report.md")

const (
	codesStart = "<!-- finding-codes:start -->\n"
	codesEnd   = "<!-- finding-codes:end -->"
)

// TestDocsFindingCodes keeps the finding-code table of docs/report.md equal
// to the code table reports use (go test ./cmd/lekta -update-docs rewrites it).
func TestDocsFindingCodes(t *testing.T) {
	const path = "../../docs/report.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, codesStart), strings.Index(doc, codesEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q … %q markers", path, codesStart, codesEnd)
	}
	var sb strings.Builder
	sb.WriteString("| code | severity | meaning |\n|---|---|---|\n")
	for _, c := range compare.FindingCodes() {
		fmt.Fprintf(&sb, "| `%s` | %s | %s |\n", c.Code, c.Severity, strings.NewReplacer("|", "\\|", "<", "&lt;").Replace(c.Explanation))
	}
	want := doc[:i+len(codesStart)] + sb.String() + doc[j:]
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Errorf("%s's finding-code table is out of date: run go test ./cmd/lekta -run TestDocsFindingCodes -update-docs", path)
	}
}

// TestDocsFlags asks each command for its flags (its --help, as a user
// would) and requires every one of them to be written as --name somewhere
// in docs/, so a new flag cannot ship undocumented.
func TestDocsFlags(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs pages: %v", err)
	}
	var docs strings.Builder
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	flagLine := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	for _, cmd := range [][]string{
		{"audit"}, {"serve"}, {"db", "status"}, {"db", "migrate"}, {"members", "add"}, {"members", "invite"},
		{"records"}, {"records", "verify"},
	} {
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			// --help answers with the usage on stderr (and exit status 0).
			_ = run(context.Background(), append(append([]string{}, cmd...), "--help"), func(string) string { return "" }, &stdout, &stderr)
			flags := flagLine.FindAllStringSubmatch(stderr.String(), -1)
			if len(flags) == 0 {
				t.Fatalf("lekta %s --help lists no flags:\n%s", name, stderr.String())
			}
			for _, f := range flags {
				re := regexp.MustCompile(`(^|[^\w-])--` + regexp.QuoteMeta(f[1]) + `([^\w-]|$)`)
				if !re.MatchString(docs.String()) {
					t.Errorf("lekta %s has --%s, which no page of docs/ mentions", name, f[1])
				}
			}
		})
	}
}
