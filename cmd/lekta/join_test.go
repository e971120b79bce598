package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/records"
	"lekta.dev/lekta/server"
)

// TestFlagsJoining: serve refuses an unknown --members, open joining
// without its mail settings or public URL, mail settings without open
// joining, an unusable SMTP URL or sender and a link lifetime out of
// range, before anything starts, with exit status 2, the flag named and
// never the SMTP password; open joining with all it needs is taken.
func TestFlagsJoining(t *testing.T) {
	const secret = "s3cret-pw"
	mail := []string{"--smtp-url", "smtp://lekta:" + secret + "@mail.example:587", "--mail-from", "Lekta <lekta@example.com>"}
	open := append([]string{"--members", "open", "--public-url", "https://audit.example.com"}, mail...)
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown members", []string{"--members", "everyone"}, nil, `--members "everyone": want closed, invite or open`},
		{"unknown members from the environment", nil, map[string]string{"LEKTA_MEMBERS": "public"}, `--members "public"`},
		{"open without mail", []string{"--members", "open", "--public-url", "https://audit.example.com"}, nil, "--members open needs --smtp-url and --mail-from"},
		{"open without a sender", []string{"--members", "open", "--public-url", "https://audit.example.com", "--smtp-url", "smtp://mail.example"}, nil, "--members open needs --smtp-url and --mail-from"},
		{"open without a public url", append([]string{"--members", "open"}, mail...), nil, "--members open needs --public-url"},
		{"mail without open", append([]string{"--members", "invite"}, mail...), nil, "are for --members open"},
		{"smtp url scheme", append(open[:len(open):len(open)], "--smtp-url", "http://lekta:"+secret+"@mail.example"), nil, "--smtp-url http://lekta:xxxxx@mail.example"},
		{"smtp url unreadable", append(open[:len(open):len(open)], "--smtp-url", "smtp://lekta:"+secret+"@mail.example:port"), nil, "--smtp-url unusable SMTP URL: not a URL"},
		{"sender", append(open[:len(open):len(open)], "--mail-from", "not an address"), nil, `--mail-from "not an address"`},
		{"link ttl", []string{"--signin-link-ttl", "10s"}, nil, "--signin-link-ttl 10s"},
		{"link ttl too long", []string{"--signin-link-ttl", "720h"}, nil, "--signin-link-ttl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			getenv := func(k string) string { return tc.env[k] }
			args := append([]string{"serve", "--data-dir", t.TempDir()}, tc.args...)
			err := run(context.Background(), args, getenv, &stdout, &stderr)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitBadInput || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v, want exit status 2 and an error with %q", err, tc.want)
			}
			code := exitCode(err, &stderr)
			if out := stdout.String() + stderr.String(); code != exitBadInput || strings.Contains(out, secret) || strings.Contains(out, "serving on") {
				t.Fatalf("exit %d, output %q: want 2, no password, nothing started", code, out)
			}
		})
	}
	s, err := readServeSettings(append([]string{"--data-dir", t.TempDir()}, open...), func(string) string { return "" }, &bytes.Buffer{})
	if err != nil || s.sf.join.joining != server.JoinOpen || s.sf.join.mailer == nil || s.sf.join.linkTTL != server.DefaultSignInLinkTTL {
		t.Fatalf("open joining with all it needs: %v, %+v", err, s)
	}
	if s, err := readServeSettings([]string{"--data-dir", t.TempDir()}, func(string) string { return "" }, &bytes.Buffer{}); err != nil || s.sf.join.joining != server.JoinClosed {
		t.Fatalf("the default: %v; want closed", err)
	}
}

// TestMembersInvite: lekta members invite adds the member when missing and
// prints a link alone on the first line, a path with a note on stderr, or
// absolute with --public-url; the link signs that member in once; a
// revoked member is not invited.
func TestMembersInvite(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := members(t, dir, "invite", "ana@example.com")
	link, rest, _ := strings.Cut(out, "\n")
	if code != exitOK || !strings.HasPrefix(link, "/members/link?token=") || !strings.Contains(rest, "added and invited") ||
		!strings.Contains(errOut, "put the service's address in front of it") {
		t.Fatalf("invite: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = members(t, dir, "invite", "ana@example.com", "--public-url", "https://audit.example.com/", "--signin-link-ttl", "72h")
	abs, rest, _ := strings.Cut(out, "\n")
	if code != exitOK || !strings.HasPrefix(abs, "https://audit.example.com/members/link?token=") || strings.Contains(rest, "added") ||
		!strings.Contains(rest, "3 days") || strings.Contains(errOut, "in front of it") {
		t.Fatalf("invite with --public-url: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := members(t, dir, "invite", "ana@example.com", "--public-url", "audit.example.com"); code != exitBadInput || !strings.Contains(errOut, "--public-url") {
		t.Fatalf("invite with a bad --public-url: exit %d, %s", code, errOut)
	}
	db, err := records.Open(context.Background(), records.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ms, _ := db.Members(context.Background())
	if len(ms) != 1 {
		t.Fatalf("%d members after two invitations of one address, want 1", len(ms))
	}
	token := strings.TrimPrefix(link, "/members/link?token=")
	if m, err := db.UseSignInLink(context.Background(), token, time.Now()); err != nil || m.ID != ms[0].ID {
		t.Fatalf("the printed link does not sign in member %s: %+v, %v", ms[0].ID, m, err)
	}
	if _, err := db.UseSignInLink(context.Background(), token, time.Now()); !errors.Is(err, records.ErrNotFound) {
		t.Fatalf("the printed link signs in twice: %v", err)
	}
	if code, _, _ := members(t, dir, "revoke", ms[0].ID); code != exitOK {
		t.Fatal("revoke failed")
	}
	if code, out, errOut := members(t, dir, "invite", "ana@example.com"); code != exitFailure || out != "" || !strings.Contains(errOut, "revoked") {
		t.Fatalf("invite of a revoked member: exit %d, stdout %q, stderr %q; want 1 and no link", code, out, errOut)
	}
}
