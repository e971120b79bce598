package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The statements of peeks, renewals and progress entries (hot_leases and
// hot_progress; see sqlite_stmts.go).
const (
	sqlRenew       = "UPDATE hot_leases SET expires_at = ? WHERE host = ? AND id = ? AND url_hash = ? AND expires_at > ?"
	sqlPutProgress = `INSERT INTO hot_progress (id, url, status, step, position, updated_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET url = excluded.url, status = excluded.status, step = excluded.step,
		position = excluded.position, updated_at = excluded.updated_at, expires_at = excluded.expires_at`
	sqlProgress     = "SELECT url, status, step, position, updated_at FROM hot_progress WHERE id = ? AND expires_at > ?"
	sqlDropProgress = "DELETE FROM hot_progress WHERE id = ?"
)

// Peek implements Store: the decision Admit would make, from one snapshot
// read without the write lock; a URL that would be admitted is checked to
// be admissible now (the archive answers, the write lock can be taken).
func (s *SQLiteStore) Peek(ctx context.Context, url string) (Admission, error) {
	t, err := parseTarget(url)
	if err != nil {
		return Admission{}, fmt.Errorf("peek: %w", err)
	}
	now := s.clock()
	st, err := s.snapshot(ctx, s.reads.admit, t, now)
	if err != nil {
		return Admission{}, err
	}
	if a, decided := s.decide(st, t, "", now); decided {
		return a, nil
	}
	// As Admit: no audit is queued that could not be recorded, nor one
	// whose admission could not take the write lock now (an empty
	// transaction, so that a locked file answers at once).
	if err := s.archive.Ping(ctx); err != nil {
		return Admission{}, archiveError("peek", err)
	}
	if err := s.write(ctx, "peek", func(*sqliteWriter) error { return nil }); err != nil {
		return Admission{}, err
	}
	return Admission{Decision: Admitted}, nil
}

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
		_, err := w.conn.ExecContext(ctx, sqlPutProgress, p.ID, p.URL, p.Status, p.Step, p.Position, now, now+ProgressTTL.Milliseconds())
		if err != nil {
			return s.fail("set progress "+p.ID, err)
		}
		return nil
	})
}

// Progress implements Store; it takes no lock.
func (s *SQLiteStore) Progress(ctx context.Context, id string) (Progress, bool, error) {
	p := Progress{ID: id}
	var at int64
	err := s.db.QueryRowContext(ctx, sqlProgress, id, s.clock()).Scan(&p.URL, &p.Status, &p.Step, &p.Position, &at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Progress{}, false, nil
	case err != nil:
		return Progress{}, false, s.fail("progress "+id, err)
	}
	p.UpdatedAt = time.UnixMilli(at)
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
