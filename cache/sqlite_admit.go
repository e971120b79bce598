package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Admit implements Store. Every decision reads the URL's cached result and
// the host's live leases and recent starts in one statement, so from one
// snapshot of the file. A decision that changes nothing (cached, joining the
// running audit, refused) is answered from a snapshot taken without the
// write lock, so that the processes sharing the file queue only for
// admissions; an admission is decided again on a fresh snapshot, and
// recorded, inside one write transaction.
func (s *SQLiteStore) Admit(ctx context.Context, url, id string) (Admission, error) {
	t, err := parseTarget(url)
	if err == nil {
		err = checkID(id)
	}
	if err != nil {
		return Admission{}, fmt.Errorf("admit: %w", err)
	}
	for {
		if a, decided, err := s.admitRead(ctx, t, id); err != nil || decided {
			return a, err
		}
		// The URL may be admitted. Within this process one admission per
		// host is decided under the lock at a time; the others wait for it
		// and read again, which usually answers them without the lock.
		gate, mine := s.gate(t.host)
		if !mine {
			select {
			case <-gate:
				continue
			case <-ctx.Done():
				return Admission{}, s.fail("admit", ctx.Err())
			}
		}
		var a Admission
		err := s.write(ctx, "admit", func(w *sqliteWriter) error {
			var err error
			a, err = s.admitLocked(ctx, w, t, id, s.clock())
			return err
		})
		s.ungate(t.host, gate)
		return a, err
	}
}

// admitRead decides without the write lock when the decision changes
// nothing; decided is false when the URL may be admitted, or when id holds
// a reservation (every answer then writes).
func (s *SQLiteStore) admitRead(ctx context.Context, t target, id string) (Admission, bool, error) {
	// A fresh result is the commonest answer, and the cheapest read.
	now := s.clock()
	st, err := s.snapshot(ctx, s.reads.admit, t, now)
	if err != nil {
		return Admission{}, false, err
	}
	if st.holds(t.hash) {
		return Admission{}, false, nil
	}
	a, decided := s.decide(st, t, id, now)
	if a.Decision == Admitted {
		return Admission{}, false, nil // a retry: confirmed under the lock
	}
	return a, decided, nil
}

// gate returns the channel closed when the admission of host in progress
// in this process ends, and whether the caller now owns it.
func (s *SQLiteStore) gate(host string) (chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, busy := s.gates[host]; busy {
		return g, false
	}
	g := make(chan struct{})
	s.gates[host] = g
	return g, true
}

// ungate ends the caller's admission of host and wakes those waiting.
func (s *SQLiteStore) ungate(host string, g chan struct{}) {
	s.mu.Lock()
	delete(s.gates, host)
	s.mu.Unlock()
	close(g)
}

// admitLocked decides while holding the write lock.
func (s *SQLiteStore) admitLocked(ctx context.Context, w *sqliteWriter, t target, id string, now int64) (Admission, error) {
	st, err := s.snapshot(ctx, w.admit, t, now)
	if err != nil {
		return Admission{}, err
	}
	a, decided := s.decide(st, t, id, now)
	switch {
	case decided && a.Decision == Refused && st.holds(t.hash):
		at := now + a.RetryAfter.Milliseconds()
		a.StartsAt = time.UnixMilli(at)
		return a, s.exec(ctx, w.conn, "admit", sqlMoveReservation, at, t.host, t.hash)
	case decided && a.Decision != Admitted:
		return a, s.exec(ctx, w.conn, "admit", sqlDeleteReservation, t.host, t.hash)
	case decided:
		return a, nil
	}
	// An audit is admitted only if its report can be kept.
	if err := s.archive.Ping(ctx); err != nil {
		return Admission{}, archiveError("admit", err)
	}
	if err := s.exec(ctx, w.conn, "admit", sqlDeleteReservation, t.host, t.hash); err != nil {
		return Admission{}, err
	}
	if _, err := w.insertLease.ExecContext(ctx, t.host, id, t.hash, t.url, now, s.limits.firstLease(now)); err != nil {
		return Admission{}, s.fail("admit", err)
	}
	// Starts older than the longest window count in none; the sweep
	// deletes them, as it deletes expired leases.
	if _, err := w.insertStart.ExecContext(ctx, t.host, now, id); err != nil {
		return Admission{}, s.fail("admit", err)
	}
	return Admission{Decision: Admitted, Lease: Lease{Host: t.host, URL: t.url, ID: id}}, nil
}

// exec runs one statement on the writer's connection.
func (s *SQLiteStore) exec(ctx context.Context, conn *sql.Conn, action, query string, args ...any) error {
	if _, err := conn.ExecContext(ctx, query, args...); err != nil {
		return s.fail(action, err)
	}
	return nil
}

// hostState is what a decision reads: the URL's result, the host's live
// leases (and the id of the one running the URL), its starts inside the
// longest window in ascending order, and its live reservations.
type hostState struct {
	result  *Entry
	leases  []hostLease
	running string
	starts  []int64
	resv    []reservation
}

// reservation is the URL's reservation in the snapshot, if any.
func (st hostState) reservation(hash string) (reservation, bool) {
	for _, r := range st.resv {
		if r.hash == hash {
			return r, true
		}
	}
	return reservation{}, false
}

// holds reports whether the URL has a reservation in the snapshot.
func (st hostState) holds(hash string) bool {
	_, ok := st.reservation(hash)
	return ok
}

// reserved is the time of the URL's reservation, -1 when it has none.
func (st hostState) reserved(hash string) int64 {
	if r, ok := st.reservation(hash); ok {
		return r.at
	}
	return -1
}

// others are the reservations of the host's other URLs.
func (st hostState) others(hash string) []reservation {
	out := make([]reservation, 0, len(st.resv))
	for _, r := range st.resv {
		if r.hash != hash {
			out = append(out, r)
		}
	}
	return out
}

// snapshot runs the admission query (sqlAdmit) on stmt.
func (s *SQLiteStore) snapshot(ctx context.Context, stmt *sql.Stmt, t target, now int64) (hostState, error) {
	rows, err := stmt.QueryContext(ctx, t.hash, now, now-s.limits.CacheTTL.Milliseconds(), t.host, now, t.host, now-s.limits.longest().Milliseconds(),
		t.host, now-ReserveGrace.Milliseconds())
	if err != nil {
		return hostState{}, s.fail("admit", err)
	}
	defer rows.Close()
	var st hostState
	for rows.Next() {
		var (
			kind   int
			id, h  string
			n1, n2 int64
			blob   []byte
		)
		if err := rows.Scan(&kind, &id, &h, &n1, &n2, &blob); err != nil {
			return hostState{}, s.fail("admit", err)
		}
		switch kind {
		case 0:
			body, err := decodeBlob(blob)
			if err != nil {
				return hostState{}, fmt.Errorf("admit: %w", err)
			}
			st.result = &Entry{ID: id, Report: body, CompletedAt: time.UnixMilli(n1), Age: ms(now - n1)}
		case 1:
			st.leases = append(st.leases, hostLease{start: n2, exp: n1})
			if h == t.hash {
				st.running = id
			}
		case 2:
			st.starts = append(st.starts, n1)
		case 3:
			st.resv = append(st.resv, reservation{id: id, hash: h, at: n1})
		}
	}
	if err := rows.Err(); err != nil {
		return hostState{}, s.fail("admit", err)
	}
	slices.Sort(st.starts)
	return st, nil
}

// decide answers Admit from a snapshot: Cached, Admitted for a retry of a
// held lease, InFlight, Refused; not decided when the URL may be admitted.
func (s *SQLiteStore) decide(st hostState, t target, id string, now int64) (Admission, bool) {
	if a, ok := st.settled(t, id); ok {
		return a, true
	}
	if wait, reason := admitWait(s.limits, st.starts, st.others(t.hash), st.reserved(t.hash), st.leases, now); reason >= 0 {
		return Admission{Decision: Refused, RetryAfter: ms(wait), Reason: s.limits.reason(reason)}, true
	}
	return Admission{}, false
}

// settled answers what comes before the limits: a fresh result, a retry
// of id's own admission, the URL running under another id.
func (st hostState) settled(t target, id string) (Admission, bool) {
	switch {
	case st.result != nil:
		return Admission{Decision: Cached, Entry: *st.result}, true
	case st.running != "" && st.running == id: // a retry of the same admission
		return Admission{Decision: Admitted, Lease: Lease{Host: t.host, URL: t.url, ID: id}}, true
	case st.running != "":
		return Admission{Decision: InFlight, RunningID: st.running}, true
	}
	return Admission{}, false
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
