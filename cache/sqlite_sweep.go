package cache

import (
	"context"
	"database/sql"
	"time"
)

// sweepBatch bounds the rows one sweep transaction deletes, so that
// admissions never wait long behind a sweep.
const sweepBatch = 500

// The sweep's statements: each deletes one batch of rows that expired
// before its argument (starts: before the longest window's cut;
// reservations: ReserveGrace before now).
var sweepSQL = []struct {
	query         string
	starts, grace bool
}{
	{"DELETE FROM hot_leases WHERE (host, id) IN (SELECT host, id FROM hot_leases WHERE expires_at <= ? LIMIT 500)", false, false},
	{"DELETE FROM hot_results WHERE url_hash IN (SELECT url_hash FROM hot_results WHERE expires_at <= ? LIMIT 500)", false, false},
	{"DELETE FROM hot_fins WHERE (host, id) IN (SELECT host, id FROM hot_fins WHERE expires_at <= ? LIMIT 500)", false, false},
	{"DELETE FROM hot_progress WHERE id IN (SELECT id FROM hot_progress WHERE expires_at <= ? LIMIT 500)", false, false},
	{"DELETE FROM hot_reservations WHERE (host, url_hash) IN (SELECT host, url_hash FROM hot_reservations WHERE at <= ? LIMIT 500)", false, true},
	{"DELETE FROM hot_starts WHERE (host, at, id) IN (SELECT host, at, id FROM hot_starts WHERE at <= ? LIMIT 500)", true, false},
}

// Sweep deletes every hot-state row that has expired: leases of crashed
// holders, stale results and completion marks, starts older than the
// longest window. Decisions ignore expired rows anyway; sweeping keeps the
// file from growing. It returns how many rows it deleted. Reports are the
// archive's to sweep.
func (s *SQLiteStore) Sweep(ctx context.Context) (int64, error) {
	var total int64
	for _, q := range sweepSQL {
		for {
			var n int64
			err := s.write(ctx, "sweep", func(w *sqliteWriter) error {
				cut := s.clock()
				switch {
				case q.starts:
					cut -= s.limits.longest().Milliseconds()
				case q.grace:
					cut -= ReserveGrace.Milliseconds()
				}
				res, err := w.conn.ExecContext(ctx, q.query, cut)
				if err != nil {
					return s.fail("sweep", err)
				}
				n, err = res.RowsAffected()
				if err != nil {
					return s.fail("sweep", err)
				}
				return nil
			})
			if err != nil {
				return total, err
			}
			total += n
			if n < sweepBatch {
				break
			}
		}
	}
	return total, nil
}

// ttls lists every live hot-state row under the key name RedisStore would
// use (without prefix) and its remaining lifetime, for the contract suite.
func (s *SQLiteStore) ttls(ctx context.Context) (map[string]time.Duration, error) {
	now := s.clock()
	out := make(map[string]time.Duration)
	put := func(k string, exp int64) {
		if exp > now {
			out[k] = max(out[k], ms(exp-now))
		}
	}
	scan := func(q string, f func(rows *sql.Rows) error) error {
		rows, err := s.db.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := f(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	var host, id, hash string
	var exp int64
	if err := scan("SELECT host, url_hash, expires_at FROM hot_leases", func(r *sql.Rows) error {
		if err := r.Scan(&host, &hash, &exp); err != nil {
			return err
		}
		put(s.keys.lease(host), exp)
		put(s.keys.leaseStarts(host), exp)
		put(s.keys.run(target{host: host, hash: hash}), exp)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := scan("SELECT host, max(at) FROM hot_starts GROUP BY host", func(r *sql.Rows) error {
		if err := r.Scan(&host, &exp); err != nil {
			return err
		}
		put(s.keys.starts(host), exp+s.limits.longest().Milliseconds())
		return nil
	}); err != nil {
		return nil, err
	}
	if err := scan("SELECT host, url_hash, expires_at FROM hot_results", func(r *sql.Rows) error {
		if err := r.Scan(&host, &hash, &exp); err != nil {
			return err
		}
		put(s.keys.result(target{host: host, hash: hash}), exp)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := scan("SELECT host, id, expires_at FROM hot_fins", func(r *sql.Rows) error {
		if err := r.Scan(&host, &id, &exp); err != nil {
			return err
		}
		put(s.keys.fin(host, id), exp)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := scan("SELECT host, max(at) FROM hot_reservations GROUP BY host", func(r *sql.Rows) error {
		if err := r.Scan(&host, &exp); err != nil {
			return err
		}
		put(s.keys.resv(host), exp+ReserveGrace.Milliseconds())
		return nil
	}); err != nil {
		return nil, err
	}
	if err := scan("SELECT id, expires_at FROM hot_progress", func(r *sql.Rows) error {
		if err := r.Scan(&id, &exp); err != nil {
			return err
		}
		put(s.keys.progress(id), exp)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}
