package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"lekta.dev/lekta/records"
)

// members runs "lekta members ARGS --data-dir DIR".
func members(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append(append([]string{"members"}, args...), "--data-dir", dir), func(string) string { return "" }, &stdout, &stderr)
	return exitCode(err, &stderr), stdout.String(), stderr.String()
}

// mustMemberKey adds a member to the data dir and returns the API key
// `lekta members add` prints alone on its first line.
func mustMemberKey(t *testing.T, dir string) string {
	t.Helper()
	code, out, errOut := members(t, dir, "add", "ana@example.com")
	if code != exitOK {
		t.Fatalf("members add: exit %d, %s", code, errOut)
	}
	key, _, _ := strings.Cut(out, "\n")
	return key
}

func TestMembersCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := members(t, dir, "add", "ana@example.com")
	if code != exitOK {
		t.Fatalf("add: exit %d, %s", code, errOut)
	}
	key, rest, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(key, records.KeyPrefix) || strings.Contains(key, " ") || strings.Contains(rest, key) {
		t.Fatalf("add: first line %q is not the key alone (rest %q)", key, rest)
	}
	if code, _, errOut := members(t, dir, "add", "ana@example.com"); code != exitFailure || !strings.Contains(errOut, "already exists") {
		t.Fatalf("add again: exit %d, %s", code, errOut)
	}
	if code, _, _ := members(t, dir, "add"); code != exitBadInput {
		t.Fatalf("add without an email: exit %d", code)
	}
	code, out, _ = members(t, dir, "list")
	id, _, _ := strings.Cut(out, "\t")
	if code != exitOK || !strings.Contains(out, "ana@example.com") || !strings.Contains(out, "active") || strings.Contains(out, key) {
		t.Fatalf("list: exit %d, %q", code, out)
	}
	db, err := records.Open(context.Background(), records.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if m, err := db.MemberByKey(context.Background(), key); err != nil || m.ID != id {
		t.Fatalf("the printed key does not open member %s: %+v, %v", id, m, err)
	}
	code, out, _ = members(t, dir, "rotate-key", id)
	newKey, _, _ := strings.Cut(out, "\n")
	if code != exitOK || newKey == key || !strings.HasPrefix(newKey, records.KeyPrefix) {
		t.Fatalf("rotate-key: exit %d, %q", code, out)
	}
	if _, err := db.MemberByKey(context.Background(), key); err == nil {
		t.Fatal("the old key still works after rotate-key")
	}
	if code, _, _ := members(t, dir, "revoke", id); code != exitOK {
		t.Fatalf("revoke: exit %d", code)
	}
	if _, err := db.MemberByKey(context.Background(), newKey); err == nil {
		t.Fatal("a revoked key still works")
	}
	if code, _, errOut := members(t, dir, "revoke", "m_nobody"); code != exitFailure || !strings.Contains(errOut, "no member") {
		t.Fatalf("revoke unknown: exit %d, %s", code, errOut)
	}
}

// TestMembersAddChecksTheAddress: add refuses an address with control
// characters, two @ or none, or SMTP's length exceeded (exit 2, nothing
// stored); list writes a stored address that holds control characters
// escaped, never raw to the terminal.
func TestMembersAddChecksTheAddress(t *testing.T) {
	dir := t.TempDir()
	for _, email := range []string{
		"\x1b[31mana@example.com", "ana@example.com\x07", "a\u202eb@example.com", "ana@bo@example.com",
		"ana.example.com", "ana@", strings.Repeat("a", 65) + "@example.com", "ana@" + strings.Repeat("b", 250) + ".example",
	} {
		if code, _, errOut := members(t, dir, "add", email); code != exitBadInput || !strings.Contains(errOut, "not an email address") {
			t.Errorf("add %q: exit %d, %s; want exit 2 saying it is not an email address", email, code, errOut)
		}
	}
	db, err := records.Open(context.Background(), records.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if ms, err := db.Members(context.Background()); err != nil || len(ms) != 0 {
		t.Errorf("members stored: %v, %v; want none", ms, err)
	}
	// A row from before add checked addresses.
	if _, err := db.SQL().Exec("INSERT INTO members (id, email, key_hash, created_at) VALUES ('m_old', ?, 'x', 0)", "\x1b]0;pwned\x07old@example.com"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, _ := members(t, dir, "list")
	if code != exitOK || strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `\x1b]0;pwned\aold@example.com`) {
		t.Errorf("list: exit %d, %q; want the stored address escaped", code, out)
	}
}
