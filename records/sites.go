package records

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Site is a member's saved site: one URL re-audited on a schedule.
type Site struct {
	ID       string
	MemberID string
	URL      string
	// Schedule is "daily", "weekly" or an interval such as "6h"; package
	// schedule says when each run falls.
	Schedule      string
	WebhookURL    string
	WebhookSecret string
	// BadgeToken names the site's badge; unguessable and not the id.
	BadgeToken string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// WebhookAt and WebhookResult are the last webhook delivery.
	WebhookAt     time.Time
	WebhookResult string
}

const siteCols = "id, member_id, url, schedule, webhook_url, webhook_secret, badge_token, created_at, updated_at, webhook_at, webhook_result"

func scanSite(row interface{ Scan(...any) error }) (Site, error) {
	var s Site
	var c, u, w int64
	err := row.Scan(&s.ID, &s.MemberID, &s.URL, &s.Schedule, &s.WebhookURL, &s.WebhookSecret, &s.BadgeToken, &c, &u, &w, &s.WebhookResult)
	s.CreatedAt, s.UpdatedAt, s.WebhookAt = fromMS(c), fromMS(u), fromMS(w)
	return s, err
}

// NewSecret is a webhook secret: 256 random bits, base32.
func NewSecret() string { return "whsec_" + rand.Text() + rand.Text() }

// SiteExistsError refuses to save a URL its member has saved already; ID
// and URL are the saved site's (the oldest, where a database written
// before URLs were unique holds copies). It wraps ErrExists.
type SiteExistsError struct {
	ID, URL string
}

func (e *SiteExistsError) Error() string {
	return fmt.Sprintf("%s: %s is saved already, as site %s", ErrExists, e.URL, e.ID)
}

func (e *SiteExistsError) Unwrap() error { return ErrExists }

// savedURL is a *SiteExistsError naming the member's site, other than
// except, that holds url; nil when there is none.
func (db *DB) savedURL(ctx context.Context, q querier, memberID, url, except string) error {
	var id string
	err := q.QueryRowContext(ctx, db.rebind("SELECT id FROM sites WHERE member_id = ? AND url = ? AND id <> ? ORDER BY created_at, id LIMIT 1"),
		memberID, url, except).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return db.unavailable("look up saved URLs in "+db.where, err)
	}
	return &SiteExistsError{ID: id, URL: url}
}

// AddSite saves s for its member, giving it an id and a badge token, unless
// the member saved its URL already (*SiteExistsError) or has limit sites
// (ErrLimit). The checks and the insert are one transaction, so two
// requests at once can neither save a URL twice nor pass the limit.
func (db *DB) AddSite(ctx context.Context, s Site, limit int, now time.Time) (Site, error) {
	s.ID, s.BadgeToken = newID("s_"), rand.Text()
	sealed, err := db.sealer.seal(s.ID, s.WebhookSecret)
	if err != nil {
		return Site{}, fmt.Errorf("save site: %w", err)
	}
	s.CreatedAt = now.UTC().Truncate(time.Millisecond)
	s.UpdatedAt = s.CreatedAt
	ctx, cancel := db.call(ctx)
	defer cancel()
	err = db.writeTx(ctx, func(q querier) error {
		if db.kind == PostgreSQL {
			// One member's inserts queue behind each other.
			if _, err := q.ExecContext(ctx, "SELECT id FROM members WHERE id = $1 FOR UPDATE", s.MemberID); err != nil {
				return db.unavailable("lock member in "+db.where, err)
			}
		}
		if err := db.savedURL(ctx, q, s.MemberID, s.URL, ""); err != nil {
			return err
		}
		var n int
		if err := q.QueryRowContext(ctx, db.rebind("SELECT count(*) FROM sites WHERE member_id = ?"), s.MemberID).Scan(&n); err != nil {
			return db.unavailable("count sites in "+db.where, err)
		}
		if n >= limit {
			return fmt.Errorf("save site: %w: %d of %d sites saved", ErrLimit, n, limit)
		}
		_, err := q.ExecContext(ctx, db.rebind("INSERT INTO sites ("+siteCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '')"),
			s.ID, s.MemberID, s.URL, s.Schedule, s.WebhookURL, sealed, s.BadgeToken, ms(s.CreatedAt), ms(s.UpdatedAt))
		if err != nil {
			return db.unavailable("save site in "+db.where, err)
		}
		return nil
	})
	if err != nil {
		return Site{}, err
	}
	return s, nil
}

// Site returns the site id; ErrNotFound when there is none.
func (db *DB) Site(ctx context.Context, id string) (Site, error) {
	return db.siteBy(ctx, "id", id)
}

// SiteByBadge returns the site whose badge token this is.
func (db *DB) SiteByBadge(ctx context.Context, token string) (Site, error) {
	return db.siteBy(ctx, "badge_token", token)
}

func (db *DB) siteBy(ctx context.Context, col, v string) (Site, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	s, err := scanSite(db.sql.QueryRowContext(ctx, db.rebind("SELECT "+siteCols+" FROM sites WHERE "+col+" = ?"), v))
	if errors.Is(err, sql.ErrNoRows) {
		return Site{}, ErrNotFound
	}
	if err != nil {
		return Site{}, db.unavailable("read site from "+db.where, err)
	}
	if s.WebhookSecret, err = db.sealer.open(s.ID, s.WebhookSecret); err != nil {
		return Site{}, fmt.Errorf("read site: %w", err)
	}
	return s, nil
}

// MemberSites lists a member's sites, oldest first.
func (db *DB) MemberSites(ctx context.Context, memberID string) ([]Site, error) {
	return db.sites(ctx, "WHERE member_id = ? ORDER BY created_at, id", memberID)
}

// AllSites lists every saved site of members whose key is not revoked, for
// the scheduler.
func (db *DB) AllSites(ctx context.Context) ([]Site, error) {
	return db.sites(ctx, "WHERE member_id IN (SELECT id FROM members WHERE revoked_at = 0) ORDER BY id")
}

func (db *DB) sites(ctx context.Context, where string, args ...any) ([]Site, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	rs, err := db.sql.QueryContext(ctx, db.rebind("SELECT "+siteCols+" FROM sites "+where), args...)
	if err != nil {
		return nil, db.unavailable("list sites in "+db.where, err)
	}
	defer rs.Close()
	var out []Site
	for rs.Next() {
		s, err := scanSite(rs)
		if err != nil {
			return nil, db.unavailable("list sites in "+db.where, err)
		}
		if s.WebhookSecret, err = db.sealer.open(s.ID, s.WebhookSecret); err != nil {
			return nil, fmt.Errorf("list sites: %w", err)
		}
		out = append(out, s)
	}
	if err := rs.Err(); err != nil {
		return nil, db.unavailable("list sites in "+db.where, err)
	}
	return out, nil
}

// UpdateSite stores s's URL, schedule and webhook. A URL the member saved
// for another site is refused with a *SiteExistsError; the check and the
// change are one transaction, as in AddSite.
func (db *DB) UpdateSite(ctx context.Context, s Site, now time.Time) error {
	sealed, err := db.sealer.seal(s.ID, s.WebhookSecret)
	if err != nil {
		return fmt.Errorf("update site %s: %w", s.ID, err)
	}
	ctx, cancel := db.call(ctx)
	defer cancel()
	return db.writeTx(ctx, func(q querier) error {
		if db.kind == PostgreSQL {
			// One member's saves and changes queue behind each other.
			lock := "SELECT id FROM members WHERE id = (SELECT member_id FROM sites WHERE id = $1) FOR UPDATE"
			if _, err := q.ExecContext(ctx, lock, s.ID); err != nil {
				return db.unavailable("lock member in "+db.where, err)
			}
		}
		var member, was string
		err := q.QueryRowContext(ctx, db.rebind("SELECT member_id, url FROM sites WHERE id = ?"), s.ID).Scan(&member, &was)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("update site %s: %w", s.ID, ErrNotFound)
		}
		if err != nil {
			return db.unavailable("update site "+s.ID+" in "+db.where, err)
		}
		set := "url = ?, schedule = ?, webhook_url = ?, webhook_secret = ?, updated_at = ?"
		if was != s.URL {
			if err := db.savedURL(ctx, q, member, s.URL, s.ID); err != nil {
				return err
			}
			set += ", duplicate_of = ''" // a copy with a URL of its own is unique again
		}
		_, err = q.ExecContext(ctx, db.rebind("UPDATE sites SET "+set+" WHERE id = ?"), s.URL, s.Schedule, s.WebhookURL, sealed, ms(now), s.ID)
		if err != nil {
			return db.unavailable("update site "+s.ID+" in "+db.where, err)
		}
		return nil
	})
}

// HistoryCount is how many re-audits the site's history holds: what
// DeleteSite removes with it.
func (db *DB) HistoryCount(ctx context.Context, siteID string) (int, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	var n int
	if err := db.sql.QueryRowContext(ctx, db.rebind("SELECT count(*) FROM history WHERE site_id = ?"), siteID).Scan(&n); err != nil {
		return 0, db.unavailable("count history of "+siteID+" in "+db.where, err)
	}
	return n, nil
}

// DeleteSite removes the site and its history.
func (db *DB) DeleteSite(ctx context.Context, id string) error {
	if _, err := db.exec(ctx, "delete history of "+id, "DELETE FROM history WHERE site_id = ?", id); err != nil {
		return err
	}
	res, err := db.exec(ctx, "delete site "+id, "DELETE FROM sites WHERE id = ?", id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete site %s: %w", id, ErrNotFound)
	}
	return nil
}

// SetWebhookResult records the last webhook delivery's outcome, in words.
func (db *DB) SetWebhookResult(ctx context.Context, id string, at time.Time, result string) error {
	if len(result) > 300 {
		result = result[:300]
	}
	_, err := db.exec(ctx, "record webhook delivery of "+id, "UPDATE sites SET webhook_at = ?, webhook_result = ? WHERE id = ?", ms(at), result, id)
	return err
}

// ChargeRun counts one run-now of the member against perHour, or refuses
// with ErrLimit and how long until one is free.
func (db *DB) ChargeRun(ctx context.Context, memberID string, now time.Time, perHour int) (time.Duration, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	var wait time.Duration
	err := db.writeTx(ctx, func(q querier) error {
		since := now.Add(-time.Hour)
		if _, err := q.ExecContext(ctx, db.rebind("DELETE FROM member_runs WHERE member_id = ? AND at <= ?"), memberID, ms(since)); err != nil {
			return db.unavailable("count runs in "+db.where, err)
		}
		var n int
		var oldest sql.NullInt64
		if err := q.QueryRowContext(ctx, db.rebind("SELECT count(*), min(at) FROM member_runs WHERE member_id = ?"), memberID).Scan(&n, &oldest); err != nil {
			return db.unavailable("count runs in "+db.where, err)
		}
		if n >= perHour {
			wait = fromMS(oldest.Int64).Add(time.Hour).Sub(now)
			return fmt.Errorf("run now: %w: %d runs in the last hour", ErrLimit, n)
		}
		if _, err := q.ExecContext(ctx, db.rebind("INSERT INTO member_runs (member_id, at) VALUES (?, ?)"), memberID, ms(now)); err != nil {
			return db.unavailable("count runs in "+db.where, err)
		}
		return nil
	})
	return max(wait, 0), err
}
