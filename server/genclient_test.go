package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	// The one package the generated client imports; named here so that
	// go mod tidy keeps it in go.mod for this test.
	_ "github.com/oapi-codegen/runtime"
)

// genClientProgram uses the client oapi-codegen generates from openapi.json
// against a running server: submit, long-poll, read the report's typed
// fields. It is compiled in a directory of its own under testdata (which
// go build ./... and go vet ./... skip), so its only source is the document.
const genClientProgram = `package main

import (
	"context"
	"fmt"
	"os"
	"time"

	client "lekta.dev/lekta/server/testdata/GENDIR"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.NewClientWithResponses(os.Getenv("LEKTA_URL"))
	if err != nil {
		fail("client: %v", err)
	}
	sub, err := c.CreateAuditWithResponse(ctx, client.CreateAuditJSONRequestBody{Url: "http://shop.example/js-title.html"})
	if err != nil || sub.JSON202 == nil {
		fail("submit: %v, status %d: %s", err, sub.StatusCode(), sub.Body)
	}
	id := sub.JSON202.Id
	wait := "5s"
	for {
		got, err := c.GetAuditWithResponse(ctx, id, &client.GetAuditParams{Wait: &wait})
		if err != nil {
			fail("poll: %v", err)
		}
		if got.JSON202 != nil {
			continue
		}
		r := got.JSON200
		if r == nil {
			fail("poll: status %d: %s", got.StatusCode(), got.Body)
		}
		// Typed fields all the way down: a Page, not a map.
		var page *client.Page = r.Lanes.Render.Page
		var share *float64 = r.Verdict.TextShare
		fmt.Printf("status=%s render_title=%q plain_title=%q findings=%d severity=%s share=%v links=%d\n",
			r.Status, page.Title, r.Lanes.Plain.Page.Title, len(r.Findings), r.Verdict.Severity, *share, len(page.Links))
		return
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
`

// TestGeneratedClient generates a Go client from openapi.json with
// oapi-codegen (the go.mod tool directive) and uses it against the running
// server: the document is complete enough to script the API with types.
func TestGeneratedClient(t *testing.T) {
	h := newHarness(t)
	// Inside the module (so the generated code builds against go.mod),
	// under testdata (so ./... never sees it).
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "genclient")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	gen := filepath.Base(dir)
	pkg := filepath.Join(dir, "lektaclient")
	main := filepath.Join(dir, "cmd")
	for _, d := range []string{pkg, main} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "tool", "oapi-codegen", "-generate", "types,client",
		"-package", "lektaclient", "-o", filepath.Join(pkg, "client.gen.go"), filepath.Join("web", "openapi.json")).CombinedOutput()
	if err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, out)
	}
	prog := strings.ReplaceAll(genClientProgram, "GENDIR", gen+"/lektaclient")
	if err := os.WriteFile(filepath.Join(main, "main.go"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.CommandContext(ctx, "go", "run", "./"+filepath.ToSlash(main))
	run.Env = append(os.Environ(), "LEKTA_URL="+h.ts.URL)
	out, err = run.CombinedOutput()
	if err != nil {
		t.Fatalf("the generated client failed: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{"status=complete", `render_title="Rendered title"`, `plain_title=""`, "severity=critical", "share=0.9375"} {
		if !strings.Contains(got, want) {
			t.Errorf("generated client printed %q, want %q in it", got, want)
		}
	}
}
