package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The statements of renewals and progress entries (hot_leases and
// hot_progress; see sqlite_stmts.go).
const (
	sqlRenew       = "UPDATE hot_leases SET expires_at = max(expires_at, ?) WHERE host = ? AND id = ? AND url_hash = ? AND expires_at > ?"
	sqlPutProgress = `INSERT INTO hot_progress (id, url, status, step, position, updated_at, expires_at, starts_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET url = excluded.url, status = excluded.status, step = excluded.step,
		position = excluded.position, updated_at = excluded.updated_at, expires_at = excluded.expires_at,
		starts_at = excluded.starts_at`
	sqlProgress     = "SELECT url, status, step, position, updated_at, starts_at FROM hot_progress WHERE id = ? AND expires_at > ?"
	sqlDropProgress = "DELETE FROM hot_progress WHERE id = ?"
)

// Renew implements Store.
func (s *SQLiteStore) Renew(ctx context.Context, l Lease) error {
	t, err := parseTarget(l.URL)
	if err == nil {
		err = checkID(l.ID)
	}
	if err != nil {
		return fmt.Errorf("renew: %w", err)
	}
	var n int64
	err = s.write(ctx, "renew "+l.ID, func(w *sqliteWriter) error {
		now := s.clock()
		res, err := w.conn.ExecContext(ctx, sqlRenew, now+s.limits.LeaseTTL.Milliseconds(), t.host, l.ID, t.hash, now)
		if err == nil {
			n, err = res.RowsAffected()
		}
		if err != nil {
			return s.fail("renew "+l.ID, err)
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case n == 0:
		return fmt.Errorf("renew %s: %w", l.ID, ErrLeaseLost)
	}
	return nil
}

// SetProgress implements Store.
func (s *SQLiteStore) SetProgress(ctx context.Context, p Progress) error {
	if err := checkProgress(p); err != nil {
		return fmt.Errorf("set progress: %w", err)
	}
	return s.write(ctx, "set progress "+p.ID, func(w *sqliteWriter) error {
		now := s.clock()
		var starts int64
		if !p.StartsAt.IsZero() {
			starts = p.StartsAt.UnixMilli()
		}
		_, err := w.conn.ExecContext(ctx, sqlPutProgress, p.ID, p.URL, p.Status, p.Step, p.Position, now, progressExpiry(p, now), starts)
		if err != nil {
			return s.fail("set progress "+p.ID, err)
		}
		return nil
	})
}

// Progress implements Store; it takes no lock.
func (s *SQLiteStore) Progress(ctx context.Context, id string) (Progress, bool, error) {
	p := Progress{ID: id}
	var at, starts int64
	err := s.db.QueryRowContext(ctx, sqlProgress, id, s.clock()).Scan(&p.URL, &p.Status, &p.Step, &p.Position, &at, &starts)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Progress{}, false, nil
	case err != nil:
		return Progress{}, false, s.fail("progress "+id, err)
	}
	p.UpdatedAt = time.UnixMilli(at)
	if starts > 0 {
		p.StartsAt = time.UnixMilli(starts)
	}
	return p, true, nil
}

// DropProgress implements Store.
func (s *SQLiteStore) DropProgress(ctx context.Context, id string) error {
	return s.write(ctx, "drop progress "+id, func(w *sqliteWriter) error {
		if _, err := w.conn.ExecContext(ctx, sqlDropProgress, id); err != nil {
			return s.fail("drop progress "+id, err)
		}
		return nil
	})
}
