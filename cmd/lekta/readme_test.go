package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"lekta.dev/lekta/compare"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the finding-code table in README.md")

const (
	codesStart = "<!-- finding-codes:start -->\n"
	codesEnd   = "<!-- finding-codes:end -->"
)

// TestReadmeFindingCodes keeps the README's finding-code table equal to the
// code table reports use (go test ./cmd/lekta -update-readme rewrites it).
func TestReadmeFindingCodes(t *testing.T) {
	const path = "../../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, codesStart), strings.Index(readme, codesEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %q … %q markers", codesStart, codesEnd)
	}
	var sb strings.Builder
	sb.WriteString("| code | severity | meaning |\n|---|---|---|\n")
	for _, c := range compare.FindingCodes() {
		fmt.Fprintf(&sb, "| `%s` | %s | %s |\n", c.Code, c.Severity, strings.NewReplacer("|", "\\|", "<", "&lt;").Replace(c.Explanation))
	}
	want := readme[:i+len(codesStart)] + sb.String() + readme[j:]
	if *updateReadme {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if readme != want {
		t.Error("README.md's finding-code table is out of date: run go test ./cmd/lekta -run TestReadmeFindingCodes -update-readme")
	}
}
