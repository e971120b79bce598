package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultSQLitePoll is how often Wait re-reads the database for an audit
// that another process runs (SQLite has no pub/sub); a Complete in the same
// process wakes its waiters at once.
const DefaultSQLitePoll = 50 * time.Millisecond

var _ Store = (*SQLiteStore)(nil)

// SQLiteOptions tune a SQLiteStore. The zero value is the production setting.
type SQLiteOptions struct {
	// Clock is the time of every decision; time.Now when nil. Processes
	// sharing one file share one machine's clock.
	Clock func() time.Time
	// PollInterval is how often Wait re-reads a joined audit run by another
	// process; DefaultSQLitePoll when zero.
	PollInterval time.Duration
	// Explain, when set, puts a driver error's cause into words
	// (records.Explain), so that a refusal says why.
	Explain func(error) error
}

// SQLiteStore is the Store of one machine without Redis: hot state in the
// hot_* tables of the SQLite file that package records opens and migrates,
// reports in its Archive (records, in the same file). Every process using
// the file (each `lekta audit`, one `lekta serve`) sees the same windows,
// leases, in-flight audits and cache.
//
// Each decision is one transaction that takes the write lock up front
// (BEGIN IMMEDIATE), so concurrent processes are serialised by SQLite's
// lock and the busy timeout of the connections (set by package records),
// and a decision never deadlocks upgrading a read lock; within a process,
// decisions queue for the store's one writing connection. Cache hits are read without the write lock. A database error
// wraps ErrUnavailable: callers fail closed.
type SQLiteStore struct {
	db      *sql.DB
	archive Archive
	limits  Limits
	now     func() time.Time
	keys    keyspace
	poll    time.Duration
	explain func(error) error
	reads   readStmts

	writer chan *sqliteWriter // holds the one writer while it is free

	mu      sync.Mutex
	changed chan struct{}            // closed and replaced when this process completes an audit
	gates   map[string]chan struct{} // host → closed when its admission in progress ends
	waiting int                      // Wait calls in progress
	closed  bool
}

// NewSQLiteStore returns a store enforcing l on db, whose schema package
// records has brought up to date, keeping reports in archive (normally the
// same records database). It checks that the hot-state tables exist.
func NewSQLiteStore(ctx context.Context, db *sql.DB, archive Archive, l Limits, o SQLiteOptions) (*SQLiteStore, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("new sqlite store: %w", err)
	}
	if db == nil || archive == nil {
		return nil, errors.New("new sqlite store: a database and an archive are required")
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultSQLitePoll
	}
	if o.Explain == nil {
		o.Explain = func(err error) error { return err }
	}

	l.Windows = append([]Window(nil), l.Windows...)
	s := &SQLiteStore{db: db, archive: archive, limits: l, now: o.Clock, poll: o.PollInterval, explain: o.Explain,
		writer: make(chan *sqliteWriter, 1), changed: make(chan struct{}), gates: make(map[string]chan struct{})}
	var err error
	if s.reads, err = prepareReads(ctx, db); err != nil {
		return nil, s.fail("new sqlite store: prepare (is the schema migrated?)", err)
	}
	// The writing connection opens at the first write: a process that
	// only reads (a cached `lekta audit`) never pays for it.
	s.writer <- &sqliteWriter{broken: true}
	return s, nil
}

// fail wraps a database failure so that callers fail closed, saying why.
func (s *SQLiteStore) fail(action string, err error) error {
	return fmt.Errorf("%s: %w: %w", action, ErrUnavailable, s.explain(err))
}

// clock is the store's time in unix ms.
func (s *SQLiteStore) clock() int64 { return s.now().UnixMilli() }

// Lookup implements Store; it takes no lock.
func (s *SQLiteStore) Lookup(ctx context.Context, url string) (Entry, bool, error) {
	t, err := parseTarget(url)
	if err != nil {
		return Entry{}, false, fmt.Errorf("lookup: %w", err)
	}
	e, ok, err := readResult(ctx, s.reads.result, t, s.clock(), s.limits.CacheTTL)
	if err != nil {
		return Entry{}, false, s.fail("lookup", err)
	}
	return e, ok, nil
}

// readResult reads the cached result of t fresh at now, by its expiry and
// by the reader's ttl.
func readResult(ctx context.Context, stmt *sql.Stmt, t target, now int64, ttl time.Duration) (Entry, bool, error) {
	var (
		id      string
		at, exp int64
		blob    []byte
	)
	err := stmt.QueryRowContext(ctx, t.hash).Scan(&id, &at, &exp, &blob)
	if errors.Is(err, sql.ErrNoRows) || err == nil && (now >= exp || !fresh(at, now, ttl)) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, err
	}
	body, err := decodeBlob(blob)
	if err != nil {
		return Entry{}, false, err
	}
	return Entry{ID: id, Report: body, CompletedAt: time.UnixMilli(at), Age: ms(now - at)}, true, nil
}

// Report implements Store: reports live in the archive.
func (s *SQLiteStore) Report(ctx context.Context, id string) (Entry, error) {
	if err := checkID(id); err != nil {
		return Entry{}, fmt.Errorf("report: %w: %w", ErrNotFound, err)
	}
	e, found, err := archived(ctx, s.archive, id, s.clock())
	switch {
	case err != nil:
		return Entry{}, err
	case !found:
		return Entry{}, fmt.Errorf("report %s: %w", id, ErrNotFound)
	}
	return e, nil
}

// Ping implements Store: the hot-state tables answer and the archive can
// keep a report.
func (s *SQLiteStore) Ping(ctx context.Context) error {
	var n int
	if err := s.reads.ping.QueryRowContext(ctx).Scan(&n); err != nil {
		return s.fail("ping sqlite", err)
	}
	if err := s.archive.Ping(ctx); err != nil {
		return archiveError("ping records", err)
	}
	return nil
}

// Close implements Store: it releases the store's connection and prepared
// statements. The *sql.DB and the archive belong to the caller.
func (s *SQLiteStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	w := <-s.writer
	s.writer <- nil // later calls fail with errStoreClosed
	s.reads.close()
	return w.close()
}

// broadcast wakes every Wait of this process.
func (s *SQLiteStore) broadcast() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}
