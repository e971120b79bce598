package records

import (
	"context"
	"crypto/rand"
	"errors"
	"time"
)

// NewSession starts a browser session of the member pages for ttl and
// returns its token (for the cookie, stored only as a hash) and its CSRF
// token (for every form).
func (db *DB) NewSession(ctx context.Context, memberID string, now time.Time, ttl time.Duration) (token, csrf string, err error) {
	token, csrf = rand.Text()+rand.Text(), rand.Text()
	_, err = db.exec(ctx, "start session", "INSERT INTO sessions (token_hash, member_id, csrf, expires_at) VALUES (?, ?, ?, ?)",
		HashKey(token), memberID, csrf, ms(now.Add(ttl)))
	if err != nil {
		return "", "", err
	}
	if _, err := db.exec(ctx, "delete expired sessions", "DELETE FROM sessions WHERE expires_at <= ?", ms(now)); err != nil {
		return "", "", err
	}
	return token, csrf, nil
}

// Session returns the member of a session token and its CSRF token:
// ErrNotFound when the session is unknown or expired, ErrRevoked when the
// member was revoked since.
func (db *DB) Session(ctx context.Context, token string, now time.Time) (Member, string, error) {
	if token == "" || len(token) > 128 {
		return Member{}, "", ErrNotFound
	}
	ctx2, cancel := db.call(ctx)
	defer cancel()
	var memberID, csrf string
	err := db.sql.QueryRowContext(ctx2, db.rebind("SELECT member_id, csrf FROM sessions WHERE token_hash = ? AND expires_at > ?"), HashKey(token), ms(now)).
		Scan(&memberID, &csrf)
	if errors.Is(err, errNoRows) {
		return Member{}, "", ErrNotFound
	}
	if err != nil {
		return Member{}, "", db.unavailable("read session from "+db.where, err)
	}
	m, err := db.Member(ctx, memberID)
	if err != nil {
		return Member{}, "", err
	}
	if m.Revoked() {
		return m, "", ErrRevoked
	}
	return m, csrf, nil
}

// EndSession signs a session out.
func (db *DB) EndSession(ctx context.Context, token string) error {
	_, err := db.exec(ctx, "end session", "DELETE FROM sessions WHERE token_hash = ?", HashKey(token))
	return err
}
