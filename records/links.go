package records

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Joining: people become members through one-time sign-in links, which
// the operator hands out (lekta members invite) or the service e-mails to
// whoever asks (serve --members open). A link's token is 256 random bits,
// stored only as its SHA-256 with the member and an expiry, and used at
// most once.

// MaxLinkWindow is the longest window AllowLinkRequest counts in: older
// requests of every subject are forgotten.
const MaxLinkWindow = 24 * time.Hour

// CheckEmail says why email is not an address a member may have (the
// rules of AddMember), or nil.
func CheckEmail(email string) error { return checkEmail(email) }

// JoinMember returns the member with this email, compared without regard
// to case, adding one when there is none (added is then true). A revoked
// member is returned as it is, revoked.
func (db *DB) JoinMember(ctx context.Context, email string, now time.Time) (m Member, added bool, err error) {
	email = strings.TrimSpace(email)
	if err := checkEmail(email); err != nil {
		return Member{}, false, fmt.Errorf("join: %q is not an email address: %w", email, err)
	}
	for range 2 {
		m, err = db.memberByEmail(ctx, email)
		if !errors.Is(err, ErrNotFound) {
			return m, false, err
		}
		m, _, err = db.AddMember(ctx, email, now)
		if !errors.Is(err, ErrExists) {
			return m, err == nil, err
		}
		// Added by another request meanwhile: read it.
	}
	return Member{}, false, fmt.Errorf("join %s: %w", email, ErrExists)
}

// memberByEmail is the member whose email is this one without regard to
// case (the database's lower() on both sides), the exact spelling first.
func (db *DB) memberByEmail(ctx context.Context, email string) (Member, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	var m Member
	var c, r int64
	err := db.sql.QueryRowContext(ctx, db.rebind("SELECT id, email, created_at, revoked_at FROM members WHERE lower(email) = lower(?) "+
		"ORDER BY CASE WHEN email = ? THEN 0 ELSE 1 END, created_at, id LIMIT 1"), email, email).
		Scan(&m.ID, &m.Email, &c, &r)
	if errors.Is(err, errNoRows) {
		return Member{}, ErrNotFound
	}
	if err != nil {
		return Member{}, db.unavailable("read member from "+db.where, err)
	}
	m.CreatedAt, m.RevokedAt = fromMS(c), fromMS(r)
	return m, nil
}

// NewSignInLink makes a one-time sign-in link for the member that works
// until now+ttl, and returns its token: shown once, stored as a hash.
// Expired links are deleted on the way.
func (db *DB) NewSignInLink(ctx context.Context, memberID string, now time.Time, ttl time.Duration) (string, error) {
	token := newToken()
	_, err := db.exec(ctx, "make sign-in link", "INSERT INTO signin_links (token_hash, member_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
		HashKey(token), memberID, ms(now), ms(now.Add(ttl)))
	if err != nil {
		return "", err
	}
	if _, err := db.exec(ctx, "delete expired sign-in links", "DELETE FROM signin_links WHERE expires_at <= ?", ms(now)); err != nil {
		return "", err
	}
	return token, nil
}

// SignInLink returns the member a link would sign in, without using it:
// ErrNotFound when the link is unknown, used or expired, ErrRevoked (with
// the member) when the member was revoked.
func (db *DB) SignInLink(ctx context.Context, token string, now time.Time) (Member, error) {
	if !linkToken(token) {
		return Member{}, ErrNotFound
	}
	ctx2, cancel := db.call(ctx)
	defer cancel()
	var memberID string
	err := db.sql.QueryRowContext(ctx2, db.rebind("SELECT member_id FROM signin_links WHERE token_hash = ? AND used_at = 0 AND expires_at > ?"),
		HashKey(token), ms(now)).Scan(&memberID)
	if errors.Is(err, errNoRows) {
		return Member{}, ErrNotFound
	}
	if err != nil {
		return Member{}, db.unavailable("read sign-in link from "+db.where, err)
	}
	return db.activeMember(ctx, memberID)
}

// UseSignInLink uses a link, once: of requests racing with one token, one
// alone gets its member. ErrNotFound when the link is unknown, used or
// expired; ErrRevoked (the link is used all the same) when the member was
// revoked.
func (db *DB) UseSignInLink(ctx context.Context, token string, now time.Time) (Member, error) {
	if !linkToken(token) {
		return Member{}, ErrNotFound
	}
	hash := HashKey(token)
	res, err := db.exec(ctx, "use sign-in link", "UPDATE signin_links SET used_at = ? WHERE token_hash = ? AND used_at = 0 AND expires_at > ?",
		ms(now), hash, ms(now))
	if err != nil {
		return Member{}, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return Member{}, ErrNotFound
	}
	ctx2, cancel := db.call(ctx)
	defer cancel()
	var memberID string
	if err := db.sql.QueryRowContext(ctx2, db.rebind("SELECT member_id FROM signin_links WHERE token_hash = ?"), hash).Scan(&memberID); err != nil {
		return Member{}, db.unavailable("read sign-in link from "+db.where, err)
	}
	return db.activeMember(ctx, memberID)
}

// linkToken reports whether token may be a link's: 43 base64url characters.
func linkToken(token string) bool {
	if len(token) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(token)
	return err == nil
}

// activeMember is the member id, ErrRevoked (with it) when revoked.
func (db *DB) activeMember(ctx context.Context, id string) (Member, error) {
	m, err := db.Member(ctx, id)
	if err != nil {
		return Member{}, err
	}
	if m.Revoked() {
		return m, ErrRevoked
	}
	return m, nil
}

// AllowLinkRequest counts one request of subject (such as the hash of an
// address, or a client) when fewer than n were counted in the window per
// before now. Otherwise it counts nothing and returns ErrLimit with how
// long until the window has room. Each subject is counted under a lock
// (SQLite's write lock, a PostgreSQL advisory lock), so racing requests
// never pass n together. per is at most MaxLinkWindow.
func (db *DB) AllowLinkRequest(ctx context.Context, subject string, n int, per time.Duration, now time.Time) (time.Duration, error) {
	if per <= 0 || per > MaxLinkWindow || n < 1 {
		return 0, fmt.Errorf("allow link request: window %s or limit %d out of range", per, n)
	}
	ctx, cancel := db.call(ctx)
	defer cancel()
	var wait time.Duration
	err := db.writeTx(ctx, func(q querier) error {
		var err error
		wait, err = db.countLinkRequest(ctx, q, subject, n, per, now)
		return err
	})
	if err != nil {
		return 0, err
	}
	if wait > 0 {
		return wait, ErrLimit
	}
	return 0, nil
}

// countLinkRequest is AllowLinkRequest's transaction: it returns 0 when
// it counted the request, else how long until the window has room.
func (db *DB) countLinkRequest(ctx context.Context, q querier, subject string, n int, per time.Duration, now time.Time) (time.Duration, error) {
	fail := func(err error) (time.Duration, error) {
		return 0, db.unavailable("count link request in "+db.where, err)
	}
	if db.kind == PostgreSQL {
		if _, err := q.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "lekta link requests "+subject); err != nil {
			return fail(err)
		}
	}
	from := ms(now.Add(-per))
	if _, err := q.ExecContext(ctx, db.rebind("DELETE FROM link_requests WHERE at <= ? OR (subject = ? AND at <= ?)"),
		ms(now.Add(-MaxLinkWindow)), subject, from); err != nil {
		return fail(err)
	}
	rs, err := q.QueryContext(ctx, db.rebind("SELECT at FROM link_requests WHERE subject = ? AND at > ? ORDER BY at"), subject, from)
	if err != nil {
		return fail(err)
	}
	var ats []int64
	for rs.Next() {
		var at int64
		if err := rs.Scan(&at); err != nil {
			rs.Close()
			return fail(err)
		}
		ats = append(ats, at)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return fail(err)
	}
	if len(ats) >= n {
		// Room comes when the (len-n+1)-th oldest leaves the window.
		return max(time.Second, fromMS(ats[len(ats)-n]).Add(per).Sub(now)), nil
	}
	if _, err := q.ExecContext(ctx, db.rebind("INSERT INTO link_requests (id, subject, at) VALUES (?, ?, ?)"), newID("q_"), subject, ms(now)); err != nil {
		return fail(err)
	}
	return 0, nil
}
