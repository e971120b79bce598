package cache

import (
	"context"
	"fmt"
)

// Complete implements Store. The report goes to the archive first; then one
// transaction caches it (unless it failed), releases the lease and marks the
// completion, and this process's waiters are woken (others poll).
func (s *SQLiteStore) Complete(ctx context.Context, l Lease, o Outcome) error {
	t, err := parseTarget(l.URL)
	if err == nil {
		err = checkID(l.ID)
	}
	if err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	blob, err := encodeBlob(o.Report, s.limits.MaxReportBytes)
	if err != nil {
		return fmt.Errorf("complete %s: %w", l.ID, err)
	}
	now := s.clock()
	if err := archiveReport(ctx, s.archive, s.limits, l.ID, blob, o.Failed, now); err != nil {
		return err
	}
	defer s.broadcast()
	return s.write(ctx, "complete "+l.ID, func(w *sqliteWriter) error {
		return s.completeLocked(ctx, w, t, l.ID, o, blob, now)
	})
}

func (s *SQLiteStore) completeLocked(ctx context.Context, w *sqliteWriter, t target, id string, o Outcome, blob []byte, now int64) error {
	// Only a live lease is released; an expired one was lost.
	res, err := w.deleteLease.ExecContext(ctx, t.host, id, now)
	if err != nil {
		return s.fail("complete "+id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.fail("complete "+id, err)
	} else if n == 0 {
		var exp int64
		switch err := w.fin.QueryRowContext(ctx, t.host, id).Scan(&exp); {
		case err == nil && exp > now:
			return nil // a repeated Complete that already succeeded
		case err != nil && !isNoRows(err):
			return s.fail("complete "+id, err)
		}
		return fmt.Errorf("complete %s: %w", id, ErrLeaseLost)
	}
	if d := o.Contacted.Milliseconds(); d > 0 {
		if _, err := w.contacted.ExecContext(ctx, d, t.host, id); err != nil {
			return s.fail("complete "+id, err)
		}
	}
	if !o.Failed {
		if _, err := w.putResult.ExecContext(ctx, t.hash, t.host, id, now, now+s.limits.CacheTTL.Milliseconds(), blob); err != nil {
			return s.fail("complete "+id, err)
		}
	}
	if _, err := w.putFin.ExecContext(ctx, t.host, id, now+s.limits.LeaseTTL.Milliseconds()); err != nil {
		return s.fail("complete "+id, err)
	}
	return nil
}
