package records

import (
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWebhookSecretsSealedAtRest: a webhook secret is stored sealed under
// the data dir's secrets.key (made 0600), bound to its site, and read back
// in the clear; a secret an earlier version stored in the clear is still
// read, and sealed when the site is written again.
func TestWebhookSecretsSealedAtRest(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, Config{DataDir: dir})
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m, _, err := db.AddMember(bg, "a@example.com", now)
	if err != nil {
		t.Fatal(err)
	}
	secret := NewSecret()
	site, err := db.AddSite(bg, Site{MemberID: m.ID, URL: "https://shop.example/", Schedule: "daily", WebhookURL: "https://hooks.example/", WebhookSecret: secret}, 3, now)
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.AddSite(bg, Site{MemberID: m.ID, URL: "https://other.example/", Schedule: "daily"}, 3, now)
	if err != nil {
		t.Fatal(err)
	}
	stored := func(id string) string {
		var v string
		if err := db.SQL().QueryRow("SELECT webhook_secret FROM sites WHERE id = ?", id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	raw := stored(site.ID)
	if strings.Contains(raw, secret) || !strings.HasPrefix(raw, sealedPrefix) {
		t.Fatalf("webhook_secret stored as %q, want it sealed (%s...)", raw, sealedPrefix)
	}
	if got, err := db.Site(bg, site.ID); err != nil || got.WebhookSecret != secret {
		t.Errorf("Site().WebhookSecret = %q, %v; want the secret", got.WebhookSecret, err)
	}
	if st, err := os.Stat(filepath.Join(dir, SecretsKeyName)); err != nil || (modesMatter && st.Mode().Perm() != 0o600) {
		t.Errorf("secrets key: %v, %v; want a 0600 file", st, err)
	}
	// A sealed secret moved to another site's row does not open.
	if _, err := db.SQL().Exec("UPDATE sites SET webhook_secret = ? WHERE id = ?", raw, other.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Site(bg, other.ID); err == nil {
		t.Errorf("a secret sealed for %s opened for %s: %q", site.ID, other.ID, got.WebhookSecret)
	}
	// A row from before sealing.
	if _, err := db.SQL().Exec("UPDATE sites SET webhook_secret = ? WHERE id = ?", "whsec_plain", other.ID); err != nil {
		t.Fatal(err)
	}
	got, err := db.Site(bg, other.ID)
	if err != nil || got.WebhookSecret != "whsec_plain" {
		t.Fatalf("plaintext row read as %q, %v", got.WebhookSecret, err)
	}
	if err := db.UpdateSite(bg, got, now); err != nil {
		t.Fatal(err)
	}
	if raw := stored(other.ID); !strings.HasPrefix(raw, sealedPrefix) {
		t.Errorf("after an update the old secret is stored as %q, want it sealed", raw)
	}
}

// writeKeyFile writes content to a file of the given mode in a directory
// of the test's own and returns its path.
func writeKeyFile(tb testing.TB, content string, mode os.FileMode) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "lekta-secrets.key")
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // whatever the umask
		tb.Fatal(err)
	}
	return path
}

// goodKey is a key as `head -c 32 /dev/urandom | base64` writes it.
func goodKey() string {
	return base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32))) + "\n"
}

// TestOpenChecksSecretsKey: Open refuses, before it reaches the database, a
// named secrets key file that is missing (it makes only the default one),
// that other users can read or write (through a symlink too), or that
// does not hold a key, on SQLite and PostgreSQL alike; the error is an
// ErrBadConfig naming the path and the fix.
func TestOpenChecksSecretsKey(t *testing.T) {
	t.Parallel()
	readable := func(t *testing.T) string { return writeKeyFile(t, goodKey(), 0o644) }
	cases := []struct {
		name  string
		path  func(t *testing.T) string
		modes bool     // only where file modes keep other users out
		says  []string // besides the path
	}{
		{"readable by others", readable, true, []string{"mode 0644", "chmod 600 "}},
		{"writable by the group", func(t *testing.T) string { return writeKeyFile(t, goodKey(), 0o620) }, true, []string{"mode 0620", "chmod 600 "}},
		{"symlink to a readable file", func(t *testing.T) string {
			link := filepath.Join(t.TempDir(), "secrets.key")
			if err := os.Symlink(readable(t), link); err != nil {
				t.Fatal(err)
			}
			return link
		}, true, []string{"mode 0644", "chmod 600 "}},
		{"a host name, not a key", func(t *testing.T) string { return writeKeyFile(t, "lekta-host-1\n", 0o600) }, false, []string{"32 random bytes in base64"}},
		{"a key too short", func(t *testing.T) string {
			return writeKeyFile(t, base64.StdEncoding.EncodeToString(make([]byte, 16))+"\n", 0o600)
		}, false, []string{"32 random bytes in base64"}},
		{"a directory", func(t *testing.T) string { return t.TempDir() }, false, []string{"not a file"}},
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "secrets.key") }, false, []string{"does not exist", "head -c 32 /dev/urandom"}},
		{"in a missing directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nowhere", "secrets.key") }, false, []string{"does not exist"}},
	}
	// Nothing listens at this PostgreSQL: the key is checked first.
	down := "postgres://lekta@127.0.0.1:1/lekta"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.modes && !modesMatter {
				t.Skip("no Unix file modes on this system")
			}
			path := tc.path(t)
			for _, c := range []Config{{DataDir: t.TempDir(), SecretsKeyFile: path}, {DatabaseURL: down, SecretsKeyFile: path}} {
				db, err := Open(bg, c)
				if err == nil {
					db.Close()
					t.Fatalf("Open with %s: no error", path)
				}
				if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), path) {
					t.Errorf("Open with %s: %v; want ErrBadConfig naming the path", path, err)
				}
				for _, s := range tc.says {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Open with %s: %v; want it to say %q", path, err, s)
					}
				}
			}
			if _, err := os.Lstat(path); tc.name == "missing" && err == nil {
				t.Errorf("a missing key file named by the configuration was made: %s", path)
			}
		})
	}
}

// TestOpenUsesNamedSecretsKey: a good key file named by the configuration
// opens, and seals with it.
func TestOpenUsesNamedSecretsKey(t *testing.T) {
	t.Parallel()
	path := writeKeyFile(t, goodKey(), 0o600)
	db := mustOpen(t, Config{DataDir: t.TempDir(), SecretsKeyFile: path})
	if err := CheckSecretsKey(path); err != nil {
		t.Errorf("CheckSecretsKey of a good key: %v", err)
	}
	if _, err := db.sealer.seal("s1", "whsec_x"); err != nil {
		t.Errorf("seal with a good key: %v", err)
	}
}

// TestOpenMakesDefaultSecretsKey: without a named key file, Open makes the
// data dir's secrets.key at once (0600, a key), and processes opening a
// fresh data dir together all open it, reading the same key whole; a
// default key file that no longer holds a key is refused at Open.
func TestOpenMakesDefaultSecretsKey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	const openers = 6
	errs := make(chan error, openers)
	for range openers {
		go func() {
			db, err := Open(bg, Config{DataDir: dir})
			if err == nil {
				db.Close()
			}
			errs <- err
		}()
	}
	for range openers {
		if err := <-errs; err != nil {
			t.Errorf("Open of a fresh data dir beside others: %v", err)
		}
	}
	path := filepath.Join(dir, SecretsKeyName)
	st, err := os.Stat(path)
	if err != nil || (modesMatter && st.Mode().Perm() != 0o600) {
		t.Fatalf("after Open, secrets key: %v, %v; want a 0600 file", st, err)
	}
	if err := CheckSecretsKey(path); err != nil {
		t.Errorf("the key Open made: %v", err)
	}
	if err := os.WriteFile(path, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(bg, Config{DataDir: dir}); err == nil || !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), path) {
		if err == nil {
			db.Close()
		}
		t.Errorf("Open with a spoilt default key: %v; want ErrBadConfig naming %s", err, path)
	}
}

// TestMakeSecretsKey: MakeSecretsKey writes a key of mode 0600 that Open
// accepts, and never replaces a file.
func TestMakeSecretsKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secrets.key")
	if err := MakeSecretsKey(path); err != nil {
		t.Fatal(err)
	}
	if err := CheckSecretsKey(path); err != nil {
		t.Errorf("the key made: %v", err)
	}
	before, _ := os.ReadFile(path)
	if err := MakeSecretsKey(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("MakeSecretsKey over a key: %v; want fs.ErrExist", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("MakeSecretsKey replaced a key")
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("%d files beside the key, want none", len(entries)-1)
	}
}
