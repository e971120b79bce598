package records

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrUnavailable: the database could not answer (down, locked, read-only,
// out of space, corrupt, too slow). Callers fail closed: no audit starts.
var ErrUnavailable = errors.New("records database unavailable")

// ErrSchemaTooNew: the database was migrated by a newer binary. It is
// refused, never written to; run the newer lekta, or restore a backup.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary knows")

// ErrBadConfig: the configuration cannot name a database (a malformed
// --database-url, an unusable data dir path) or names an unusable secrets
// key file. The message names the flag.
var ErrBadConfig = errors.New("bad records database configuration")

// unavailable wraps err, caused by the database, so that callers can fail
// closed, and says in words what went wrong.
func (db *DB) unavailable(action string, err error) error {
	on := errOnSQLite
	if db.kind == PostgreSQL {
		on = errOnPostgreSQL
	}
	return db.scrub(fmt.Errorf("%s: %w on %w: %s: %w", action, ErrUnavailable, on, cause(err), err))
}

// The engine of a database that did not answer, for Engine: the driver's
// own error does not always say (database/sql's "bad connection").
var (
	errOnSQLite     = errors.New("SQLite")
	errOnPostgreSQL = errors.New("PostgreSQL")
)

// Explain prefixes err, a failure of the database's driver, with its cause
// in words ("the database file is locked by another process: database is
// locked (5)"), for package cache, which runs statements on DB.SQL but
// does not know the drivers' error types.
func Explain(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", cause(err), err)
}

// Cause names, for people, why a database call failed ("nothing answers
// at the database's address"), without the driver's own words.
func Cause(err error) string { return cause(err) }

// Engine names the database engine whose driver failed in err,
// "PostgreSQL" or "SQLite", or "" when err carries neither driver's error.
func Engine(err error) string {
	var (
		se *sqlite.Error
		pe *pgconn.PgError
		ce *pgconn.ConnectError
	)
	switch {
	case errors.Is(err, errOnSQLite), errors.As(err, &se):
		return "SQLite"
	case errors.Is(err, errOnPostgreSQL), errors.As(err, &pe), errors.As(err, &ce):
		return "PostgreSQL"
	}
	return ""
}

// cause names, for people, why a database call failed.
func cause(err error) string {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return "the database file is locked by another process"
		case sqlite3.SQLITE_READONLY:
			return "the database file or its directory is read-only"
		case sqlite3.SQLITE_FULL:
			return "the disk holding the database is full"
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return "the database file is corrupt or not a SQLite database"
		case sqlite3.SQLITE_CANTOPEN:
			return "the database file cannot be opened"
		case sqlite3.SQLITE_IOERR:
			if errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "disk") {
				return "the disk holding the database is full or failing"
			}
			return "reading or writing the database file failed"
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "28P01" || pe.Code == "28000":
			return "PostgreSQL refused the user name or password"
		case pe.Code == "3D000":
			return "the database does not exist"
		case strings.HasPrefix(pe.Code, "53"):
			return "PostgreSQL is out of resources"
		case strings.HasPrefix(pe.Code, "57"):
			return "PostgreSQL is shutting down or not accepting connections"
		}
		return "PostgreSQL refused the request"
	}
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the disk holding the database is full"
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "the data dir is not writable"
	case errors.Is(err, context.DeadlineExceeded):
		return "the database did not answer in time"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing answers at the database's address"
	}
	return "the database did not answer"
}

// scrubbed is an error whose message has a secret replaced; errors.Is and
// errors.As still see the original chain.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub removes the database password from err's message, in every spelling
// a driver might print it (as given, and URL-escaped), and puts it on one line.
func (db *DB) scrub(err error) error {
	return Scrub(err, db.secrets...)
}

// Scrub replaces each secret (a password) in err's message, in every
// spelling a client library might print it (as given, and URL-escaped),
// with "xxxxx", and puts the message on one line; errors.Is and errors.As
// still see err.
func Scrub(err error, secrets ...string) error {
	if err == nil {
		return err
	}
	msg := err.Error()
	// Drivers list every address they tried on lines of their own: keep
	// messages on one line, for logs and the CLI's one-line errors.
	clean := strings.NewReplacer("\n\t", "; ", "\n", "; ", "\t", " ").Replace(msg)
	for _, secret := range secrets {
		for _, s := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), url.UserPassword("", secret).String()[1:]} {
			if s != "" {
				clean = strings.ReplaceAll(clean, s, "xxxxx")
			}
		}
	}
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}
