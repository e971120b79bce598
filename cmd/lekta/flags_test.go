package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"lekta.dev/lekta/render"
)

// TestBadFlagsOneSentence: a bad flag or argument is one sentence on
// stderr that names the subcommand's help, with exit status 2, not the
// whole usage (twice); -h still shows the usage.
func TestBadFlagsOneSentence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		says string
	}{
		{"audit --fail-on major", []string{"audit", "--fail-on", "major", "http://example.com/"}, "see lekta audit --help"},
		{"audit unknown flag", []string{"audit", "--colour", "http://example.com/"}, "see lekta audit --help"},
		{"audit two URLs", []string{"audit", "http://a.example/", "http://b.example/"}, "see lekta audit --help"},
		{"serve unknown flag", []string{"serve", "--colour"}, "see lekta serve --help"},
		{"db status unknown flag", []string{"db", "status", "--colour"}, "see lekta db status --help"},
		{"members add unknown flag", []string{"members", "add", "--colour", "ana@example.com"}, "see lekta members add --help"},
		{"records unknown flag", []string{"records", "--colour"}, "see lekta records --help"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, func(string) string { return "" }, &stdout, &stderr)
			code := exitCode(err, &stderr)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if code != exitBadInput || len(lines) != 1 || !strings.HasPrefix(lines[0], "lekta: ") || !strings.Contains(lines[0], tc.says) {
				t.Errorf("exit %d, %d lines on stderr:\n%s\nwant exit 2 and one line naming %q", code, len(lines), stderr.String(), tc.says)
			}
		})
	}
	t.Run("help", func(t *testing.T) {
		t.Parallel()
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"audit", "-h"}, func(string) string { return "" }, &stdout, &stderr)
		if code := exitCode(err, &stderr); code != exitOK || !strings.Contains(stdout.String()+stderr.String(), "usage: lekta audit") {
			t.Errorf("-h: exit %d, output %q", code, stdout.String()+stderr.String())
		}
	})
}

// TestDBStatusNamesUnreachablePostgres: an unreachable PostgreSQL is named
// once, in words, without the driver's list of dial errors.
func TestDBStatusNamesUnreachablePostgres(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"db", "status", "--database-url", "postgres://lekta:secret@127.0.0.1:1/lekta"},
		func(string) string { return "" }, &stdout, &stderr)
	code := exitCode(err, &stderr)
	msg := stderr.String()
	if code != exitNotRun || strings.Count(msg, "127.0.0.1:1") != 1 || strings.Contains(msg, "dial") || strings.Contains(msg, "secret") ||
		!strings.Contains(msg, "PostgreSQL") || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want exit 3 and one sentence naming PostgreSQL at 127.0.0.1:1 once", code, msg)
	}
}

// TestChromiumHelpNamesLookupOrder: lekta audit --help names the browsers
// --chromium defaults to in the order render looks for them, the headless
// shell first.
func TestChromiumHelpNamesLookupOrder(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"audit", "--help"}, func(string) string { return "" }, &stdout, &stderr)
	if code := exitCode(err, &stderr); code != exitOK {
		t.Fatalf("audit --help: exit %d\n%s", code, stderr.String())
	}
	help := stderr.String()
	i := strings.Index(help, "\n  -chromium ")
	if i < 0 {
		t.Fatalf("audit --help has no -chromium:\n%s", help)
	}
	text, _, _ := strings.Cut(help[i+1:], "\n  -")
	_, def, ok := strings.Cut(text, "default:")
	if !ok {
		t.Fatalf("the -chromium help names no default:\n%s", text)
	}
	var first string
	for _, f := range strings.Fields(def) {
		if strings.Contains(f, "chrom") {
			first = strings.Trim(f, ",;")
			break
		}
	}
	if !strings.Contains(first, "headless-shell") {
		t.Errorf("the -chromium help names %q first, want the headless shell:\n%s", first, text)
	}
	if want := strings.Join(render.BrowserNames(), ", "); !strings.Contains(text, want) {
		t.Errorf("the -chromium help does not name render's lookup order %s:\n%s", want, text)
	}
}
