package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The hot-state tables (created by package records' migrations):
//
//	hot_leases  (host, id) → url_hash, url, started_at, expires_at
//	hot_starts  (host, at, id)
//	hot_results url_hash → host, id, completed_at, expires_at, body
//	hot_fins    (host, id) → expires_at
//	hot_progress id → url, status, step, position, updated_at, expires_at
//
// Times are unix milliseconds by the store's clock.
const (
	// sqlAdmit reads everything a decision needs in one statement, so
	// from one snapshot: kind 0 the URL's result if fresh, 1 each live
	// lease of the host (expiry, start), 2 each start inside the longest
	// window, 3 each live reservation. Arguments: url hash, now, now
	// minus the reader's CacheTTL, host, now, host, the longest window's
	// cut, host, now minus ReserveGrace.
	sqlAdmit = `SELECT 0, id, '', completed_at, 0, body FROM hot_results WHERE url_hash = ? AND expires_at > ? AND completed_at > ?
		UNION ALL SELECT 1, id, url_hash, expires_at, started_at, NULL FROM hot_leases WHERE host = ? AND expires_at > ?
		UNION ALL SELECT 2, '', '', at, 0, NULL FROM hot_starts WHERE host = ? AND at > ?
		UNION ALL SELECT 3, id, url_hash, at, 0, NULL FROM hot_reservations WHERE host = ? AND at > ?`
	sqlResult      = "SELECT id, completed_at, expires_at, body FROM hot_results WHERE url_hash = ?"
	sqlLeaseOf     = "SELECT expires_at FROM hot_leases WHERE host = ? AND id = ?"
	sqlPing        = "SELECT count(*) FROM hot_fins WHERE host = ''"
	sqlInsertLease = "INSERT OR REPLACE INTO hot_leases (host, id, url_hash, url, started_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)"
	sqlInsertStart = "INSERT OR IGNORE INTO hot_starts (host, at, id) VALUES (?, ?, ?)"
	sqlContacted   = "UPDATE hot_starts SET at = at + ? WHERE host = ? AND id = ?"
	sqlDeleteLease = "DELETE FROM hot_leases WHERE host = ? AND id = ? AND expires_at > ?"
	sqlPutResult   = `INSERT INTO hot_results (url_hash, host, id, completed_at, expires_at, body) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (url_hash) DO UPDATE SET host = excluded.host, id = excluded.id,
		completed_at = excluded.completed_at, expires_at = excluded.expires_at, body = excluded.body`
	sqlPutFin = `INSERT INTO hot_fins (host, id, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (host, id) DO UPDATE SET expires_at = excluded.expires_at`
	sqlFin = "SELECT expires_at FROM hot_fins WHERE host = ? AND id = ?"
)

// readStmts are prepared on the pool: database/sql prepares each on every
// connection that runs it, once.
type readStmts struct {
	result, leaseOf, ping, admit *sql.Stmt
}

func prepareReads(ctx context.Context, db *sql.DB) (readStmts, error) {
	var r readStmts
	var err error
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{{&r.result, sqlResult}, {&r.leaseOf, sqlLeaseOf}, {&r.ping, sqlPing}, {&r.admit, sqlAdmit}} {
		if *p.dst, err = db.PrepareContext(ctx, p.sql); err != nil {
			r.close()
			return readStmts{}, err
		}
	}
	return r, nil
}

func (r readStmts) close() {
	for _, st := range []*sql.Stmt{r.result, r.leaseOf, r.ping, r.admit} {
		if st != nil {
			_ = st.Close()
		}
	}
}

// sqliteWriter is the store's one writing connection with its statements.
type sqliteWriter struct {
	conn                                *sql.Conn
	begin, commit, rollback             *sql.Stmt
	admit, insertLease, insertStart     *sql.Stmt
	deleteLease, putResult, putFin, fin *sql.Stmt
	contacted                           *sql.Stmt
	all                                 []*sql.Stmt
	broken                              bool // to be (re)opened before use
}

// openWriter takes a connection from the pool for good and prepares the
// writing statements on it.
func (s *SQLiteStore) openWriter(ctx context.Context) (*sqliteWriter, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, s.fail("open sqlite writer", err)
	}
	w := &sqliteWriter{conn: conn}
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&w.begin, "BEGIN IMMEDIATE"}, {&w.commit, "COMMIT"}, {&w.rollback, "ROLLBACK"},
		{&w.admit, sqlAdmit}, {&w.insertLease, sqlInsertLease}, {&w.insertStart, sqlInsertStart},
		{&w.deleteLease, sqlDeleteLease}, {&w.putResult, sqlPutResult},
		{&w.putFin, sqlPutFin}, {&w.fin, sqlFin}, {&w.contacted, sqlContacted},
	} {
		if *p.dst, err = conn.PrepareContext(ctx, p.sql); err != nil {
			_ = w.close()
			return nil, s.fail("prepare sqlite writer (is the schema migrated?)", err)
		}
		w.all = append(w.all, *p.dst)
	}
	return w, nil
}

func (w *sqliteWriter) close() error {
	if w == nil || w.conn == nil {
		return nil
	}
	for _, st := range w.all {
		_ = st.Close()
	}
	if err := w.conn.Close(); err != nil {
		return fmt.Errorf("close sqlite writer: %w", err)
	}
	return nil
}

// errStoreClosed is returned by calls after Close.
var errStoreClosed = errors.New("store closed")

// rollbackTimeout bounds the ROLLBACK after a failed transaction, which
// must run even when the caller's context has ended.
const rollbackTimeout = 5 * time.Second

// write runs f in one transaction holding the database's write lock,
// committing when f returns nil. f's own errors come back as they are;
// database failures wrap ErrUnavailable.
func (s *SQLiteStore) write(ctx context.Context, action string, f func(w *sqliteWriter) error) error {
	var w *sqliteWriter
	select {
	case w = <-s.writer:
	case <-ctx.Done():
		return s.fail(action, ctx.Err())
	}
	defer func() { s.writer <- w }()
	if w == nil {
		return fmt.Errorf("%s: %w", action, errStoreClosed)
	}
	if w.broken { // not opened yet, or failed to roll back
		fresh, err := s.openWriter(ctx)
		if err != nil {
			return err
		}
		_ = w.close()
		w = fresh
	}
	// BEGIN IMMEDIATE waits for another process's lock as long as the
	// connection's busy timeout (set by records) and ctx allow.
	if _, err := w.begin.ExecContext(ctx); err != nil {
		w.abort()
		return s.fail(action, err)
	}
	if err := f(w); err != nil {
		w.abort()
		return err
	}
	if _, err := w.commit.ExecContext(ctx); err != nil {
		w.abort()
		return s.fail(action, err)
	}
	return nil
}

// abort rolls back whatever is open; a connection that cannot is replaced
// before its next use.
func (w *sqliteWriter) abort() {
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	if _, err := w.rollback.ExecContext(ctx); err != nil && !isNoTransaction(err) {
		w.broken = true
	}
}

// isNoTransaction is SQLite's answer to a ROLLBACK with nothing open.
func isNoTransaction(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no transaction is active")
}
