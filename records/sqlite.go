package records

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite" // also the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// journalSizeLimit caps the write-ahead log left on disk after a
// checkpoint, so a burst of large reports does not leave a large -wal file.
const journalSizeLimit = 32 << 20

// connectSQLite opens the file in c.DataDir, creating dir and file when
// missing.
func connectSQLite(ctx context.Context, c Config) (*DB, error) {
	if c.DataDir == "" {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, errNoDataDir)
	}
	dir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return nil, fmt.Errorf("%w: data dir %q: %w", ErrBadConfig, c.DataDir, err)
	}
	// The driver reads everything after '?' as its own parameters.
	if strings.ContainsAny(dir, "?#") {
		return nil, fmt.Errorf("%w: data dir %q: must not contain '?' or '#'", ErrBadConfig, dir)
	}
	path := filepath.Join(dir, FileName)
	db := &DB{kind: SQLite, where: path, dir: dir, path: path, timeout: c.CallTimeout, minFree: c.MinFree, q: sqliteQueries}
	if err := PrivateDir(dir); err != nil {
		if errors.Is(err, ErrBadConfig) {
			return nil, err
		}
		return nil, db.unavailable("data dir "+dir, err)
	}
	if err := writable(dir); err != nil {
		return nil, db.unavailable("data dir "+dir, err)
	}
	if err := PrivateFile(path); err != nil {
		if errors.Is(err, ErrBadConfig) {
			return nil, err
		}
		return nil, db.unavailable("create "+path, err)
	}
	db.sql, err = sql.Open("sqlite", sqliteDSN(path, c))
	if err != nil {
		return nil, db.unavailable("open "+path, err)
	}
	// One connection is the hot-state writer of package cache; the others
	// read, and write records. WAL lets readers run beside the writer.
	db.sql.SetMaxOpenConns(8)
	db.sql.SetMaxIdleConns(8)
	cctx, cancel := db.call(ctx)
	defer cancel()
	// Opening a connection applies the pragmas, which reads the header:
	// a file that is not a database fails here.
	if err := firstConnection(cctx, db.sql); err != nil {
		_ = db.sql.Close()
		return nil, db.unavailable("open "+path, err)
	}
	return db, nil
}

// firstConnection opens a connection and reads the schema. Processes
// opening a new file together may find it busy while another turns on
// WAL, a change SQLite does not wait for under the busy timeout: that is
// tried again until ctx ends.
func firstConnection(ctx context.Context, db *sql.DB) error {
	for {
		var n int
		err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sqliteDSN is the file name with the pragmas every connection runs: the
// busy timeout first, WAL, and NORMAL synchronous (durable at each
// checkpoint; a crash of the process loses nothing committed, a power cut
// at most the last transactions).
func sqliteDSN(path string, c Config) string {
	p := []string{
		"busy_timeout(" + strconv.FormatInt(c.BusyTimeout.Milliseconds(), 10) + ")",
		"journal_mode(WAL)",
		"synchronous(NORMAL)",
		"foreign_keys(1)",
		"journal_size_limit(" + strconv.Itoa(journalSizeLimit) + ")",
	}
	return path + "?_pragma=" + strings.Join(p, "&_pragma=")
}

// checkRoom fails when the data dir's disk has less than minFree bytes
// free, so that an audit is refused before the site is contacted rather
// than run and then not recorded.
func (db *DB) checkRoom() error {
	if db.minFree < 0 {
		return nil
	}
	free, err := freeBytes(db.dir)
	if err != nil {
		return db.unavailable("check free space in "+db.dir, err)
	}
	if free < db.minFree {
		return fmt.Errorf("check free space in %s: %w: the disk holding the database is full: %s free, %s needed to record audits (%w)",
			db.dir, ErrUnavailable, size(free), size(db.minFree), syscall.ENOSPC)
	}
	return nil
}

// Size writes a byte count for people ("1.5 MiB").
func Size(n int64) string { return size(n) }

// size writes a byte count for people.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
