package cache

import (
	"context"
	"fmt"
	"time"
)

// The statements of reservations (hot_reservations: (host, url hash) → id, at).
const (
	sqlPutReservation = `INSERT INTO hot_reservations (host, url_hash, id, at) VALUES (?, ?, ?, ?)
		ON CONFLICT (host, url_hash) DO UPDATE SET id = excluded.id, at = excluded.at`
	sqlMoveReservation   = "UPDATE hot_reservations SET at = ? WHERE host = ? AND url_hash = ?"
	sqlDeleteReservation = "DELETE FROM hot_reservations WHERE host = ? AND url_hash = ?"
	sqlUnreserve         = "DELETE FROM hot_reservations WHERE host = ? AND url_hash = ? AND id = ?"
)

// Reserve implements Store: one write transaction that reads the host's
// state and, unless the URL is cached, running or refused, records the
// reservation.
func (s *SQLiteStore) Reserve(ctx context.Context, url, id string, within time.Duration) (Admission, error) {
	t, err := parseTarget(url)
	if err == nil {
		err = checkID(id)
	}
	if err != nil {
		return Admission{}, fmt.Errorf("reserve: %w", err)
	}
	// No audit is queued that could not be recorded.
	if err := s.archive.Ping(ctx); err != nil {
		return Admission{}, archiveError("reserve", err)
	}
	var a Admission
	err = s.write(ctx, "reserve", func(w *sqliteWriter) error {
		now := s.clock()
		st, err := s.snapshot(ctx, w.admit, t, now)
		if err != nil {
			return err
		}
		if settled, ok := st.settled(t, id); ok {
			a = settled
			return nil
		}
		if r, ok := st.reservation(t.hash); ok && r.id != id {
			// Shared: the queue joins the two.
			a = Admission{Decision: Reserved, StartsAt: time.UnixMilli(r.at)}
			return nil
		}
		at, wait, reason, refused := plan(s.limits, st.starts, st.others(t.hash), st.leases, now, within)
		if refused {
			a = Admission{Decision: Refused, RetryAfter: ms(wait), Reason: s.limits.reason(reason)}
			return s.exec(ctx, w.conn, "reserve", sqlDeleteReservation, t.host, t.hash)
		}
		a = reservedAt(s.limits, at, now, reason)
		return s.exec(ctx, w.conn, "reserve", sqlPutReservation, t.host, t.hash, id, at)
	})
	return a, err
}

// Unreserve implements Store.
func (s *SQLiteStore) Unreserve(ctx context.Context, url, id string) error {
	t, err := parseTarget(url)
	if err != nil {
		return fmt.Errorf("unreserve: %w", err)
	}
	return s.write(ctx, "unreserve", func(w *sqliteWriter) error {
		return s.exec(ctx, w.conn, "unreserve", sqlUnreserve, t.host, t.hash, id)
	})
}
