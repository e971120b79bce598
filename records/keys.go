package records

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxKeyLabel is the longest label of a member's own API key, in bytes.
const MaxKeyLabel = 100

// APIKey is an API key a member made for themselves on the member pages.
// Only its hash is stored; the key itself is shown once, when it is made.
// The key the operator gives (AddMember, RotateKey) is not one of these.
type APIKey struct {
	ID       string
	MemberID string
	// Label is the member's name for the key ("CI", "laptop").
	Label     string
	CreatedAt time.Time
	// RevokedAt is zero while the key works.
	RevokedAt time.Time
}

// Revoked reports whether the key was revoked.
func (k APIKey) Revoked() bool { return !k.RevokedAt.IsZero() }

// CheckKeyLabel says why label cannot name a key, or nil: at most
// MaxKeyLabel bytes of valid UTF-8 without control or formatting
// characters.
func CheckKeyLabel(label string) error {
	switch {
	case len(label) > MaxKeyLabel:
		return fmt.Errorf("it is longer than %d bytes", MaxKeyLabel)
	case !utf8.ValidString(label):
		return errors.New("it is not valid UTF-8")
	}
	for _, r := range label {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return fmt.Errorf("it contains %q", r)
		}
	}
	return nil
}

// AddAPIKey makes a new API key for the member and returns it with the key,
// which is shown once and stored only as its hash. ErrLimit when the member
// has most working keys already; ErrRevoked for a revoked member.
func (db *DB) AddAPIKey(ctx context.Context, memberID, label string, most int, now time.Time) (APIKey, string, error) {
	label = strings.TrimSpace(label)
	if err := CheckKeyLabel(label); err != nil {
		return APIKey{}, "", fmt.Errorf("add API key: the label %w", err)
	}
	if _, err := db.activeMember(ctx, memberID); err != nil {
		return APIKey{}, "", fmt.Errorf("add API key for %s: %w", memberID, err)
	}
	keys, err := db.APIKeys(ctx, memberID)
	if err != nil {
		return APIKey{}, "", err
	}
	working := 0
	for _, k := range keys {
		if !k.Revoked() {
			working++
		}
	}
	if working >= most {
		return APIKey{}, "", fmt.Errorf("add API key for %s: %w: %d working keys", memberID, ErrLimit, working)
	}
	key, hash := NewKey()
	k := APIKey{ID: newID("k_"), MemberID: memberID, Label: label, CreatedAt: now.UTC().Truncate(time.Millisecond)}
	if _, err := db.exec(ctx, "add API key", "INSERT INTO api_keys (id, member_id, key_hash, label, created_at) VALUES (?, ?, ?, ?, ?)",
		k.ID, k.MemberID, hash, k.Label, ms(k.CreatedAt)); err != nil {
		return APIKey{}, "", err
	}
	return k, key, nil
}

// APIKeys lists the member's own API keys, newest first, revoked ones too.
func (db *DB) APIKeys(ctx context.Context, memberID string) ([]APIKey, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	rs, err := db.sql.QueryContext(ctx, db.rebind("SELECT id, label, created_at, revoked_at FROM api_keys WHERE member_id = ? ORDER BY created_at DESC, id"), memberID)
	if err != nil {
		return nil, db.unavailable("list API keys in "+db.where, err)
	}
	defer rs.Close()
	out := []APIKey{}
	for rs.Next() {
		k := APIKey{MemberID: memberID}
		var c, r int64
		if err := rs.Scan(&k.ID, &k.Label, &c, &r); err != nil {
			return nil, db.unavailable("list API keys in "+db.where, err)
		}
		k.CreatedAt, k.RevokedAt = fromMS(c), fromMS(r)
		out = append(out, k)
	}
	if err := rs.Err(); err != nil {
		return nil, db.unavailable("list API keys in "+db.where, err)
	}
	return out, nil
}

// RevokeAPIKey stops one of the member's own keys at once. ErrNotFound when
// the member has no key with this id; revoking a revoked key does nothing.
func (db *DB) RevokeAPIKey(ctx context.Context, memberID, id string, now time.Time) error {
	res, err := db.exec(ctx, "revoke API key", "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND member_id = ? AND revoked_at = 0", ms(now), id, memberID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	keys, err := db.APIKeys(ctx, memberID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.ID == id {
			return nil // already revoked
		}
	}
	return fmt.Errorf("revoke API key %s: %w", id, ErrNotFound)
}

// memberByOwnKey is MemberByKey for the members' own keys: ErrNotFound for
// an unknown or revoked key, ErrRevoked (with the member) when the member
// was revoked.
func (db *DB) memberByOwnKey(ctx context.Context, hash string) (Member, error) {
	ctx2, cancel := db.call(ctx)
	defer cancel()
	var memberID, stored string
	err := db.sql.QueryRowContext(ctx2, db.rebind("SELECT member_id, key_hash FROM api_keys WHERE key_hash = ? AND revoked_at = 0"), hash).
		Scan(&memberID, &stored)
	if errors.Is(err, errNoRows) {
		return Member{}, ErrNotFound
	}
	if err != nil {
		return Member{}, db.unavailable("read API key from "+db.where, err)
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hash)) != 1 {
		return Member{}, ErrNotFound
	}
	return db.activeMember(ctx, memberID)
}

// SealShown seals a new key for the one page that shows it, bound to bind
// (such as a session), under the secrets key: the sealed value may travel
// through the browser, and only this service opens it.
func (db *DB) SealShown(bind, key string) (string, error) {
	if key == "" {
		return "", errors.New("seal shown key: nothing to seal")
	}
	return db.sealer.seal("shown:"+bind, key)
}

// OpenShown opens what SealShown sealed with the same bind; anything else,
// a value in the clear included, is an error.
func (db *DB) OpenShown(bind, sealed string) (string, error) {
	if !strings.HasPrefix(sealed, sealedPrefix) {
		return "", errors.New("open shown key: not sealed")
	}
	return db.sealer.open("shown:"+bind, sealed)
}
