package records

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Conditions of the member, site and history calls.
var (
	// ErrNotFound: no member, site or session has that id (or key).
	ErrNotFound = errors.New("no such record")
	// ErrExists: a member with that email already exists, or the member
	// saved that URL already (a *SiteExistsError says which site).
	ErrExists = errors.New("already exists")
	// ErrRevoked: the key belongs to a member whose access was revoked.
	ErrRevoked = errors.New("the key was revoked")
	// ErrLimit: a per-member limit (sites, run-now per hour) is reached.
	ErrLimit = errors.New("per-member limit reached")
)

// KeyPrefix starts every member API key.
const KeyPrefix = "lekta_"

// Member is one member: the API key itself is never stored, only its hash.
type Member struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"created_at"`
	// RevokedAt is zero while the member's key works.
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// Revoked reports whether the member's key was revoked.
func (m Member) Revoked() bool { return !m.RevokedAt.IsZero() }

// NewKey returns a new API key ("lekta_" and 256 random bits, base64url)
// and the hash that is stored in its place.
func NewKey() (key, hash string) {
	key = KeyPrefix + newToken()
	return key, HashKey(key)
}

// newToken is 256 random bits, base64url: 43 characters.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashKey is the stored form of a key or token: SHA-256, hex.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// newID is a random id with a prefix ("m_", "s_"): 80 random bits.
func newID(prefix string) string {
	return prefix + strings.ToLower(rand.Text()[:16])
}

// rebind turns the ? placeholders of a statement into PostgreSQL's $n.
func (db *DB) rebind(q string) string {
	if db.kind != PostgreSQL {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// exec runs one statement under the call timeout.
func (db *DB) exec(ctx context.Context, action, q string, args ...any) (sql.Result, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	res, err := db.sql.ExecContext(ctx, db.rebind(q), args...)
	if err != nil {
		return nil, db.unavailable(action+" in "+db.where, err)
	}
	return res, nil
}

// isUnique reports whether err is a unique-constraint violation.
func isUnique(err error) bool {
	s := err.Error()
	return strings.Contains(s, "UNIQUE constraint failed") || strings.Contains(s, "SQLSTATE 23505")
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// AddMember creates a member and returns it with its API key, which is
// shown once and never stored. ErrExists when the email is taken.
func (db *DB) AddMember(ctx context.Context, email string, now time.Time) (Member, string, error) {
	email = strings.TrimSpace(email)
	if err := checkEmail(email); err != nil {
		return Member{}, "", fmt.Errorf("add member: %q is not an email address: %w", email, err)
	}
	key, hash := NewKey()
	m := Member{ID: newID("m_"), Email: email, CreatedAt: now.UTC().Truncate(time.Millisecond)}
	ctx2, cancel := db.call(ctx)
	defer cancel()
	_, err := db.sql.ExecContext(ctx2, db.rebind("INSERT INTO members (id, email, key_hash, created_at) VALUES (?, ?, ?, ?)"),
		m.ID, m.Email, hash, ms(m.CreatedAt))
	if err != nil {
		if isUnique(err) {
			return Member{}, "", fmt.Errorf("add member %s: %w: a member has this email", email, ErrExists)
		}
		return Member{}, "", db.unavailable("add member in "+db.where, err)
	}
	return m, key, nil
}

// Members lists every member, oldest first.
func (db *DB) Members(ctx context.Context) ([]Member, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	rs, err := db.sql.QueryContext(ctx, "SELECT id, email, created_at, revoked_at FROM members ORDER BY created_at, id")
	if err != nil {
		return nil, db.unavailable("list members in "+db.where, err)
	}
	defer rs.Close()
	var out []Member
	for rs.Next() {
		var m Member
		var c, r int64
		if err := rs.Scan(&m.ID, &m.Email, &c, &r); err != nil {
			return nil, db.unavailable("list members in "+db.where, err)
		}
		m.CreatedAt, m.RevokedAt = fromMS(c), fromMS(r)
		out = append(out, m)
	}
	if err := rs.Err(); err != nil {
		return nil, db.unavailable("list members in "+db.where, err)
	}
	return out, nil
}

// Member returns the member id; ErrNotFound when there is none.
func (db *DB) Member(ctx context.Context, id string) (Member, error) {
	return db.member(ctx, "id", id)
}

func (db *DB) member(ctx context.Context, col, v string) (Member, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	var m Member
	var c, r int64
	err := db.sql.QueryRowContext(ctx, db.rebind("SELECT id, email, created_at, revoked_at FROM members WHERE "+col+" = ?"), v).
		Scan(&m.ID, &m.Email, &c, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, ErrNotFound
	}
	if err != nil {
		return Member{}, db.unavailable("read member from "+db.where, err)
	}
	m.CreatedAt, m.RevokedAt = fromMS(c), fromMS(r)
	return m, nil
}

// MemberByKey returns the member whose API key this is (the key the
// operator gave, or one the member made: AddAPIKey): ErrNotFound for an
// unknown key or a revoked own key, ErrRevoked (with the member) for a
// revoked member's. The stored hash is compared in constant time.
func (db *DB) MemberByKey(ctx context.Context, key string) (Member, error) {
	if !strings.HasPrefix(key, KeyPrefix) || len(key) > 128 {
		return Member{}, ErrNotFound
	}
	hash := HashKey(key)
	ctx, cancel := db.call(ctx)
	defer cancel()
	var m Member
	var stored string
	var c, r int64
	err := db.sql.QueryRowContext(ctx, db.rebind("SELECT id, email, created_at, revoked_at, key_hash FROM members WHERE key_hash = ?"), hash).
		Scan(&m.ID, &m.Email, &c, &r, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		return db.memberByOwnKey(ctx, hash)
	}
	if err != nil {
		return Member{}, db.unavailable("read member from "+db.where, err)
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hash)) != 1 {
		return Member{}, ErrNotFound
	}
	m.CreatedAt, m.RevokedAt = fromMS(c), fromMS(r)
	if m.Revoked() {
		return m, ErrRevoked
	}
	return m, nil
}

// RevokeMember stops the member's key at once and ends their sessions.
func (db *DB) RevokeMember(ctx context.Context, id string, now time.Time) error {
	res, err := db.exec(ctx, "revoke member "+id, "UPDATE members SET revoked_at = ? WHERE id = ? AND revoked_at = 0", ms(now), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := db.Member(ctx, id); err != nil {
			return fmt.Errorf("revoke member %s: %w", id, err)
		}
		return nil // already revoked
	}
	_, err = db.exec(ctx, "end sessions of "+id, "DELETE FROM sessions WHERE member_id = ?", id)
	return err
}

// RotateKey gives the member a new key (shown once), so the old one stops
// working at once, and ends their sessions. A revoked member gets ErrRevoked.
func (db *DB) RotateKey(ctx context.Context, id string) (string, error) {
	m, err := db.Member(ctx, id)
	if err != nil {
		return "", fmt.Errorf("rotate key of %s: %w", id, err)
	}
	if m.Revoked() {
		return "", fmt.Errorf("rotate key of %s: %w; add the member again instead", id, ErrRevoked)
	}
	key, hash := NewKey()
	if _, err := db.exec(ctx, "rotate key of "+id, "UPDATE members SET key_hash = ? WHERE id = ?", hash, id); err != nil {
		return "", err
	}
	if _, err := db.exec(ctx, "end sessions of "+id, "DELETE FROM sessions WHERE member_id = ?", id); err != nil {
		return "", err
	}
	return key, nil
}

// checkEmail accepts an address of one local part and one domain, no
// longer than SMTP allows (RFC 5321: 64 and 254 bytes), in valid UTF-8
// without spaces, control or bidirectional formatting characters, quotes
// or angle brackets: what an operator types, and nothing a terminal or a
// page could act on when the address is shown again.
func checkEmail(email string) error {
	local, domain, ok := strings.Cut(email, "@")
	switch {
	case !ok || strings.Contains(domain, "@"):
		return errors.New("it needs exactly one @")
	case local == "" || domain == "" || !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, "."):
		return errors.New("it needs a name before the @ and a domain with a dot after it")
	case len(local) > 64 || len(email) > 254:
		return errors.New("it is longer than an address may be (64 bytes before the @, 254 in all)")
	case !utf8.ValidString(email):
		return errors.New("it is not valid UTF-8")
	}
	for _, r := range email {
		if r <= 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || strings.ContainsRune("<>\"\\,;()[]", r) ||
			(r >= 0x200e && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return fmt.Errorf("it contains %q", r)
		}
	}
	return nil
}
