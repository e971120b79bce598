package records

import (
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
