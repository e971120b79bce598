package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRejectsBadFlags checks that every serve-only flag is validated
// before anything starts, with exit status 2 and the flag named.
func TestServeRejectsBadFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"client rate", []string{"--client-rate", "ten a minute"}, nil, "--client-rate"},
		{"client rate from the environment", nil, map[string]string{"LEKTA_CLIENT_RATE": "0/1m"}, `--client-rate "0/1m"`},
		{"trusted proxy", []string{"--trusted-proxy", "10.0.0.0/33"}, nil, "--trusted-proxy"},
		{"log format", []string{"--log-format", "xml"}, nil, "--log-format"},
		{"renderers", []string{"--renderers", "0"}, nil, "--renderers"},
		{"queue", []string{"--queue", "-1"}, nil, "--queue"},
		{"shared flag", []string{"--rate", "1/0s"}, nil, "--rate"},
		{"arguments", []string{"http://shop.example/"}, nil, "no arguments"},
		{"request records ttl", []string{"--request-records-ttl", "-1h"}, nil, "--request-records-ttl"},
		{"egress addr from the environment", nil, map[string]string{"LEKTA_EGRESS_ADDR": "203.0.113.9,not-an-ip"}, `--egress-addr "not-an-ip"`},
		{"public url not absolute", []string{"--public-url", "lekta.example"}, nil, "--public-url"},
		{"public url from the environment", nil, map[string]string{"LEKTA_PUBLIC_URL": "ftp://lekta.example/"}, `--public-url "ftp://lekta.example/"`},
		{"postgres without a secrets key", []string{"--redis-url", "redis://127.0.0.1:1", "--database-url", "postgres://u@127.0.0.1:1/db"}, nil, "--secrets-key-file"},
		{"address in use or bad", []string{"--addr", "256.0.0.1:1"}, nil, "--addr"},
		{"public url without a scheme", []string{"--public-url", "audit.example.com"}, nil, `--public-url "audit.example.com"`},
		{"public url with a query", nil, map[string]string{"LEKTA_PUBLIC_URL": "https://audit.example.com/?x=1"}, "--public-url"},
		{"bot info url relative", []string{"--bot-info-url", "/bot"}, nil, `--bot-info-url "/bot"`},
		{"bot info url breaking the user agent", nil, map[string]string{"LEKTA_BOT_INFO_URL": "https://example.com/bot)"}, "--bot-info-url"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			getenv := func(k string) string { return tc.env[k] }
			err := run(context.Background(), append([]string{"serve"}, tc.args...), getenv, &stdout, &stderr)
			var ee *exitError
			if !errors.As(err, &ee) || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v, want an error naming %s", err, tc.want)
			}
			if want := exitBadInput; tc.want == "--addr" {
				if ee.code != exitNotRun {
					t.Errorf("exit status %d, want %d", ee.code, exitNotRun)
				}
			} else if ee.code != want {
				t.Errorf("exit status %d, want %d", ee.code, want)
			}
			if strings.Contains(stdout.String(), "serving on") {
				t.Error("the server started")
			}
		})
	}
}

func TestParsePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"10.1.2.3/8":       "10.0.0.0/8",
		"192.0.2.7":        "192.0.2.7/32",
		"::ffff:192.0.2.7": "192.0.2.7/32",
		"2001:db8::1":      "2001:db8::1/128",
	} {
		got, err := parsePrefix(in)
		if err != nil || got != netip.MustParsePrefix(want) {
			t.Errorf("parsePrefix(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	if _, err := parsePrefix("proxy.internal"); err == nil {
		t.Error("a host name was accepted as a trusted proxy")
	}
}

func TestServeJSONLogs(t *testing.T) {
	var buf bytes.Buffer
	newLogger(&buf, "json", 0).Info("audit", "id", "X", "host", "shop.example", "outcome", "complete")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["msg"] != "audit" || line["host"] != "shop.example" {
		t.Errorf("json log line %q: %v", buf.String(), err)
	}
}

// TestServeRefusesUnusableSecretsKey: serve checks --secrets-key-file
// before it listens (the --addr here cannot be listened on, so a later
// check would fail on it instead): a key file others can read, one that
// holds no key, and, with PostgreSQL, a missing one are each refused with
// exit status 2 and one line naming the path and the fix.
func TestServeRefusesUnusableSecretsKey(t *testing.T) {
	t.Parallel()
	keyFile := func(t *testing.T, content string, mode os.FileMode) string {
		path := filepath.Join(t.TempDir(), "lekta-secrets.key")
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)) + "\n"
	postgres := []string{"--redis-url", "redis://127.0.0.1:1", "--database-url", "postgres://u@127.0.0.1:1/db"}
	cases := []struct {
		name  string
		path  func(t *testing.T) string
		extra []string
		says  func(path string) []string
	}{
		{"readable by others", func(t *testing.T) string { return keyFile(t, key, 0o644) }, nil,
			func(path string) []string { return []string{"mode 0644", "chmod 600 " + path} }},
		{"a host name, not a key", func(t *testing.T) string { return keyFile(t, "lekta-host-1\n", 0o600) }, nil,
			func(path string) []string { return []string{path, "32 random bytes in base64"} }},
		{"missing, with PostgreSQL", func(t *testing.T) string { return filepath.Join(t.TempDir(), "secrets.key") }, postgres,
			func(path string) []string { return []string{path, "does not exist"} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := tc.path(t)
			args := append([]string{"serve", "--addr", "256.0.0.1:1", "--secrets-key-file", path}, tc.extra...)
			code, out, errOut := runCLIEnv(dataDirEnv(filepath.Join(t.TempDir(), "data")), args...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != exitBadInput || len(lines) != 1 || !strings.Contains(errOut, "--secrets-key-file") || strings.Contains(out, "serving on") {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and one line naming --secrets-key-file, before listening", code, out, errOut)
			}
			for _, s := range tc.says(path) {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q does not say %q", errOut, s)
				}
			}
		})
	}
}
