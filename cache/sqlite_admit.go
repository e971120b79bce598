package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
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
// nothing; decided is false when the URL may be admitted.
func (s *SQLiteStore) admitRead(ctx context.Context, t target, id string) (Admission, bool, error) {
	// A fresh result is the commonest answer, and the cheapest read.
	now := s.clock()
	if e, ok, err := readResult(ctx, s.reads.result, t, now); err != nil {
		return Admission{}, false, s.fail("admit", err)
	} else if ok {
		return Admission{Decision: Cached, Entry: e}, true, nil
	}
	st, err := s.snapshot(ctx, s.reads.admit, t, now)
	if err != nil {
		return Admission{}, false, err
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
	if a, decided := s.decide(st, t, id, now); decided {
		return a, nil
	}
	// An audit is admitted only if its report can be kept.
	if err := s.archive.Ping(ctx); err != nil {
		return Admission{}, archiveError("admit", err)
	}
	if _, err := w.insertLease.ExecContext(ctx, t.host, id, t.hash, t.url, now, now+s.limits.LeaseTTL.Milliseconds()); err != nil {
		return Admission{}, s.fail("admit", err)
	}
	// Starts older than the longest window count in none; the sweep
	// deletes them, as it deletes expired leases.
	if _, err := w.insertStart.ExecContext(ctx, t.host, now, id); err != nil {
		return Admission{}, s.fail("admit", err)
	}
	return Admission{Decision: Admitted, Lease: Lease{Host: t.host, URL: t.url, ID: id}}, nil
}

// hostState is what a decision reads: the URL's result, the host's live
// leases (their expiries, and the id of the one running the URL) and its
// starts inside the longest window, in ascending order.
type hostState struct {
	result  *Entry
	exps    []int64
	running string
	starts  []int64
}

// snapshot runs the admission query (sqlAdmit) on stmt.
func (s *SQLiteStore) snapshot(ctx context.Context, stmt *sql.Stmt, t target, now int64) (hostState, error) {
	rows, err := stmt.QueryContext(ctx, t.hash, now, t.host, now, t.host, now-s.limits.longest().Milliseconds())
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
			st.exps = append(st.exps, n1)
			if h == t.hash {
				st.running = id
			}
		case 2:
			st.starts = append(st.starts, n1)
		}
	}
	if err := rows.Err(); err != nil {
		return hostState{}, s.fail("admit", err)
	}
	slices.Sort(st.starts)
	return st, nil
}

// decide answers from a snapshot: Cached, Admitted for a retry of a held
// lease, InFlight, Refused; not decided when the URL may be admitted.
func (s *SQLiteStore) decide(st hostState, t target, id string, now int64) (Admission, bool) {
	switch {
	case st.result != nil:
		return Admission{Decision: Cached, Entry: *st.result}, true
	case st.running != "" && st.running == id: // a retry of the same admission
		return Admission{Decision: Admitted, Lease: Lease{Host: t.host, URL: t.url, ID: id}}, true
	case st.running != "":
		return Admission{Decision: InFlight, RunningID: st.running}, true
	}
	if wait, reason := violation(s.limits, st.exps, st.starts, now); reason >= 0 {
		return Admission{Decision: Refused, RetryAfter: ms(wait), Reason: s.limits.reason(reason)}, true
	}
	return Admission{}, false
}

// violation returns the longest wait in ms among the violated constraints
// and its index (0 concurrency, i the i-th window), or -1 when none is;
// exps are the live leases' expiries, starts the start times in ascending
// order.
func violation(l Limits, exps, starts []int64, now int64) (wait int64, reason int) {
	reason = -1
	if len(exps) >= l.Concurrency {
		first := exps[0]
		for _, e := range exps[1:] {
			first = min(first, e)
		}
		wait, reason = first-now, 0
	}
	for i, w := range l.Windows {
		per := w.Per.Milliseconds()
		lo := sort.Search(len(starts), func(j int) bool { return starts[j] > now-per })
		if n := len(starts) - lo; n >= w.N {
			if d := starts[lo+n-w.N] + per - now; d > wait {
				wait, reason = d, i+1
			}
		}
	}
	return wait, reason
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
