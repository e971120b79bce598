package records

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestJoinMember: an address is a member once, whatever its case; a bad
// address is refused; a revoked member comes back revoked, not re-added.
func TestJoinMember(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, e.config(t))
			now := time.UnixMilli(1_800_000_000_000)
			m, added, err := db.JoinMember(bg, " Ana@Example.com ", now)
			if err != nil || !added || m.Email != "Ana@Example.com" || m.ID == "" {
				t.Fatalf("JoinMember new = %+v, %v, %v", m, added, err)
			}
			again, added, err := db.JoinMember(bg, "ana@example.COM", now)
			if err != nil || added || again.ID != m.ID {
				t.Fatalf("JoinMember of the same address in other case = %+v, %v, %v; want member %s", again, added, err, m.ID)
			}
			if _, _, err := db.JoinMember(bg, "ana@example.com\x1b[31m", now); err == nil {
				t.Fatal("an address with a control character was accepted")
			}
			if err := db.RevokeMember(bg, m.ID, now); err != nil {
				t.Fatal(err)
			}
			if r, _, err := db.JoinMember(bg, "ana@example.com", now); err != nil || r.ID != m.ID || !r.Revoked() {
				t.Fatalf("JoinMember of a revoked member = %+v, %v; want the revoked member", r, err)
			}
			if ms, _ := db.Members(bg); len(ms) != 1 {
				t.Fatalf("%d members, want 1", len(ms))
			}
		})
	}
}

// TestSignInLinks: a link is stored as a hash, can be looked at without
// being used, is used once (also when requests race), and stops at its
// expiry and when its member is revoked.
func TestSignInLinks(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, e.config(t))
			now := time.UnixMilli(1_800_000_000_000)
			m, _, _ := db.JoinMember(bg, "ana@example.com", now)
			token, err := db.NewSignInLink(bg, m.ID, now, 30*time.Minute)
			if err != nil || len(token) != 43 {
				t.Fatalf("NewSignInLink = %q, %v; want 43 base64url characters (256 bits)", token, err)
			}
			var stored string
			if err := db.SQL().QueryRow("SELECT token_hash FROM signin_links").Scan(&stored); err != nil || stored != HashKey(token) {
				t.Fatalf("stored %q (%v): want only the SHA-256 of the token", stored, err)
			}
			if got, err := db.SignInLink(bg, token, now.Add(time.Minute)); err != nil || got.ID != m.ID {
				t.Fatalf("SignInLink = %+v, %v", got, err)
			}
			if got, err := db.UseSignInLink(bg, token, now.Add(time.Minute)); err != nil || got.ID != m.ID {
				t.Fatalf("UseSignInLink = %+v, %v", got, err)
			}
			for _, f := range []func(string, time.Time) (Member, error){
				func(tk string, at time.Time) (Member, error) { return db.SignInLink(bg, tk, at) },
				func(tk string, at time.Time) (Member, error) { return db.UseSignInLink(bg, tk, at) },
			} {
				if _, err := f(token, now.Add(2*time.Minute)); !errors.Is(err, ErrNotFound) {
					t.Fatalf("a used link: %v, want ErrNotFound", err)
				}
				if _, err := f(strings.Repeat("A", 43), now); !errors.Is(err, ErrNotFound) {
					t.Fatalf("an unknown link: %v, want ErrNotFound", err)
				}
			}
			late, _ := db.NewSignInLink(bg, m.ID, now, 30*time.Minute)
			if _, err := db.UseSignInLink(bg, late, now.Add(30*time.Minute)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("a link at its expiry: %v, want ErrNotFound", err)
			}
			raced, _ := db.NewSignInLink(bg, m.ID, now, 30*time.Minute)
			if n := raceUse(db, raced, now); n != 1 {
				t.Fatalf("8 racing uses of one link: %d signed in, want 1", n)
			}
			kept, _ := db.NewSignInLink(bg, m.ID, now, 30*time.Minute)
			if err := db.RevokeMember(bg, m.ID, now); err != nil {
				t.Fatal(err)
			}
			if _, err := db.UseSignInLink(bg, kept, now); !errors.Is(err, ErrRevoked) {
				t.Fatalf("a revoked member's link: %v, want ErrRevoked", err)
			}
		})
	}
}

// raceUse uses token from 8 goroutines at once and counts the successes.
func raceUse(db *DB, token string, now time.Time) int {
	var wg sync.WaitGroup
	var won atomic.Int32
	for range 8 {
		wg.Go(func() {
			if _, err := db.UseSignInLink(bg, token, now); err == nil {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	return int(won.Load())
}

// TestAllowLinkRequest: n requests of a subject pass in a window, the next
// is refused with the wait until the oldest leaves it, other subjects are
// counted apart, and racing requests never pass n together.
func TestAllowLinkRequest(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, e.config(t))
			now := time.UnixMilli(1_800_000_000_000)
			for i := range 3 {
				if _, err := db.AllowLinkRequest(bg, "email:a", 3, time.Hour, now.Add(time.Duration(i)*time.Minute)); err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
			}
			wait, err := db.AllowLinkRequest(bg, "email:a", 3, time.Hour, now.Add(10*time.Minute))
			if !errors.Is(err, ErrLimit) || wait != 50*time.Minute {
				t.Fatalf("4th request: wait %s, %v; want ErrLimit and 50m", wait, err)
			}
			if _, err := db.AllowLinkRequest(bg, "email:b", 3, time.Hour, now.Add(10*time.Minute)); err != nil {
				t.Fatalf("another subject: %v", err)
			}
			if _, err := db.AllowLinkRequest(bg, "email:a", 3, time.Hour, now.Add(time.Hour+time.Second)); err != nil {
				t.Fatalf("after the oldest left the window: %v", err)
			}
			var wg sync.WaitGroup
			var passed atomic.Int32
			for range 10 {
				wg.Go(func() {
					if _, err := db.AllowLinkRequest(bg, "client:c", 3, time.Hour, now); err == nil {
						passed.Add(1)
					}
				})
			}
			wg.Wait()
			if n := passed.Load(); n != 3 {
				t.Fatalf("10 racing requests with a limit of 3: %d passed", n)
			}
		})
	}
}

// TestAPIKeys: a member's own keys open the API beside the operator's key,
// are stored as hashes, stop at once when revoked, stop with their member,
// and are limited in number.
func TestAPIKeys(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			db := mustOpen(t, e.config(t))
			now := time.UnixMilli(1_800_000_000_000)
			m, legacy, _ := db.AddMember(bg, "ana@example.com", now)
			k, key, err := db.AddAPIKey(bg, m.ID, " CI ", 2, now)
			if err != nil || k.Label != "CI" || !strings.HasPrefix(key, KeyPrefix) {
				t.Fatalf("AddAPIKey = %+v %q, %v", k, key, err)
			}
			var stored string
			if err := db.SQL().QueryRow("SELECT key_hash FROM api_keys").Scan(&stored); err != nil || stored != HashKey(key) {
				t.Fatalf("stored %q (%v): want only the SHA-256 of the key", stored, err)
			}
			for name, kk := range map[string]string{"own key": key, "operator's key": legacy} {
				if got, err := db.MemberByKey(bg, kk); err != nil || got.ID != m.ID {
					t.Fatalf("MemberByKey(%s) = %+v, %v", name, got, err)
				}
			}
			if _, _, err := db.AddAPIKey(bg, m.ID, "bad\u202elabel", 2, now); err == nil {
				t.Fatal("a label with a bidi override was accepted")
			}
			_, second, _ := db.AddAPIKey(bg, m.ID, "", 2, now)
			if _, _, err := db.AddAPIKey(bg, m.ID, "third", 2, now); !errors.Is(err, ErrLimit) {
				t.Fatalf("a key beyond the limit: %v, want ErrLimit", err)
			}
			if err := db.RevokeAPIKey(bg, "m_other", k.ID, now); !errors.Is(err, ErrNotFound) {
				t.Fatalf("revoke another member's key: %v, want ErrNotFound", err)
			}
			if err := db.RevokeAPIKey(bg, m.ID, k.ID, now); err != nil {
				t.Fatal(err)
			}
			if _, err := db.MemberByKey(bg, key); !errors.Is(err, ErrNotFound) {
				t.Fatalf("a revoked own key: %v, want ErrNotFound", err)
			}
			if keys, err := db.APIKeys(bg, m.ID); err != nil || len(keys) != 2 || !keys[1].Revoked() && !keys[0].Revoked() {
				t.Fatalf("APIKeys = %+v, %v; want 2, one revoked", keys, err)
			}
			if err := db.RevokeMember(bg, m.ID, now); err != nil {
				t.Fatal(err)
			}
			if _, err := db.MemberByKey(bg, second); !errors.Is(err, ErrRevoked) {
				t.Fatalf("a revoked member's own key: %v, want ErrRevoked", err)
			}
		})
	}
}

// TestSealShown: a new key sealed for the page that shows it opens only
// for the same session, and a key in the clear is not taken.
func TestSealShown(t *testing.T) {
	db := mustOpen(t, Config{DataDir: t.TempDir()})
	key, _ := NewKey()
	sealed, err := db.SealShown("session", key)
	if err != nil || strings.Contains(sealed, key[len(KeyPrefix):]) {
		t.Fatalf("SealShown = %q, %v", sealed, err)
	}
	if got, err := db.OpenShown("session", sealed); err != nil || got != key {
		t.Fatalf("OpenShown = %q, %v", got, err)
	}
	if _, err := db.OpenShown("other session", sealed); err == nil {
		t.Error("OpenShown opened a key sealed for another session")
	}
	if _, err := db.OpenShown("session", key); err == nil {
		t.Error("OpenShown took a key in the clear")
	}
}
