package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"lekta.dev/lekta/internal/testsite"
)

// TestHelpExitsZero: "lekta audit --help" exits 0 and prints the usage, as
// "lekta --help" does.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"audit", "--help"}, {"audit", "-h"}, {"serve", "--help"}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr)
		if code := exitCode(err, &stderr); code != exitOK {
			t.Errorf("lekta %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr.String())
		}
		if !strings.Contains(stdout.String()+stderr.String(), "usage: lekta") {
			t.Errorf("lekta %s printed no usage", strings.Join(args, " "))
		}
		if strings.Contains(stderr.String(), "lekta: ") && !strings.Contains(stderr.String(), "usage") {
			t.Errorf("lekta %s printed an error: %q", strings.Join(args, " "), stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"audit", "--help"}, func(string) string { return "" }, &stdout, &stderr)
	if !strings.Contains(stderr.String(), "--fail-on") || !strings.Contains(stderr.String(), "4 the audit ran and has a finding") {
		t.Errorf("audit usage does not document --fail-on and exit 4:\n%s", stderr.String())
	}
}

// TestFailOn: --fail-on critical|warning exits 4 when the report has a
// finding at or above that severity, so the CLI can gate a deploy; the
// report is printed all the same.
func TestFailOn(t *testing.T) {
	serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	site := testsite.Start(t)
	cases := []struct {
		name, flag, page string
		code             int
	}{
		{"never by default", "", "js-title.html", exitOK},
		{"critical finding", "critical", "js-title.html?1", exitFindings},
		{"warning threshold catches critical", "warning", "js-title.html?2", exitFindings},
		{"no critical finding", "critical", "index.html", exitOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--json"}
			if tc.flag != "" {
				args = append(args, "--fail-on", tc.flag)
			}
			code, out, errOut := auditCLI(t, site, append(args, "http://shop.example/"+tc.page)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			if !strings.Contains(out, `"schema": "lekta.report/v1"`) {
				t.Errorf("no report printed")
			}
			if tc.code == exitFindings && !strings.Contains(errOut, "at or above "+tc.flag+" (--fail-on "+tc.flag+").") {
				t.Errorf("stderr %q does not say why it failed", errOut)
			}
			if strings.Contains(errOut, "lekta: ") && tc.code == exitOK {
				t.Errorf("stderr %q on success", errOut)
			}
		})
	}
}
