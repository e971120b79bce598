package records

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// Kind is the database engine behind a DB.
type Kind string

// The engines records runs on.
const (
	SQLite     Kind = "sqlite"
	PostgreSQL Kind = "postgres"
)

// Defaults of Config.
const (
	// DefaultCallTimeout bounds each call to the database.
	DefaultCallTimeout = 5 * time.Second
	// DefaultBusyTimeout is how long a SQLite statement waits for another
	// process's write lock before it fails as locked.
	DefaultBusyTimeout = 3 * time.Second
	// DefaultMinFree is the free space below which a SQLite database
	// refuses to admit audits (Ping fails): room for a few of the largest
	// reports and their write-ahead log.
	DefaultMinFree = 16 << 20
	// FileName is the SQLite database in the data dir.
	FileName = "lekta.db"
)

// Config says which database to open.
type Config struct {
	// DataDir holds the SQLite file FileName when DatabaseURL is empty. It
	// is created with mode 0700 when missing.
	DataDir string
	// DatabaseURL (postgres:// or postgresql://) selects PostgreSQL.
	DatabaseURL string
	// SecretsKeyFile is the key that seals webhook secrets at rest, 32
	// random bytes in base64 in a file only its owner can read (see
	// MakeSecretsKey). It must exist: only the default, SecretsKeyName in
	// DataDir when this is empty on SQLite, is made when missing.
	// PostgreSQL needs it to store or read a sealed secret. Open checks it.
	SecretsKeyFile string
	// CallTimeout bounds each call, connecting included; DefaultCallTimeout
	// when zero.
	CallTimeout time.Duration
	// BusyTimeout is SQLite's busy timeout; DefaultBusyTimeout when zero.
	BusyTimeout time.Duration
	// MinFree is the free space, in bytes, that Ping requires on the
	// SQLite file's disk; DefaultMinFree when zero, no check when negative.
	MinFree int64
}

// DB is an open records database. It is safe for concurrent use.
type DB struct {
	kind    Kind
	where   string // for messages: the file, or the URL without password
	sql     *sql.DB
	dir     string   // SQLite: the data dir
	path    string   // SQLite: the file
	secrets []string // PostgreSQL: the password, kept out of every message
	timeout time.Duration
	minFree int64
	q       queries
	sealer  *sealer
	// flat: a PostgreSQL schema before 0008, without partitions (MigrateTo).
	flat bool
}

// Open connects to the database and brings its schema up to date (see
// Migrate), as `lekta serve` and `lekta audit` do at start-up; on SQLite it
// also checks that there is room to record audits. It reads the secrets
// key (see CheckSecretsKey), making the default one when missing: a key
// file the configuration names is checked before the database is reached.
// Every error names the database and the cause, never the password.
func Open(ctx context.Context, c Config) (*DB, error) {
	if c.SecretsKeyFile != "" {
		if err := CheckSecretsKey(c.SecretsKeyFile); err != nil {
			return nil, err
		}
	}
	db, err := Connect(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := db.sealer.check(); err != nil {
		_ = db.Close()
		return nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.EnsurePartitions(ctx, time.Now()); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.Ping(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// Connect opens the database and checks that it answers, without reading or
// changing its schema (for `lekta db status` and `lekta db migrate`).
func Connect(ctx context.Context, c Config) (*DB, error) {
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.BusyTimeout <= 0 {
		c.BusyTimeout = DefaultBusyTimeout
	}
	if c.MinFree == 0 {
		c.MinFree = DefaultMinFree
	}
	var db *DB
	var err error
	if c.DatabaseURL != "" {
		db, err = connectPostgres(ctx, c)
	} else {
		db, err = connectSQLite(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	db.sealer = &sealer{path: c.SecretsKeyFile}
	if c.SecretsKeyFile == "" && db.kind == SQLite {
		db.sealer = &sealer{path: filepath.Join(db.dir, SecretsKeyName), create: true}
	}
	return db, nil
}

// Kind says which engine this is.
func (db *DB) Kind() Kind { return db.kind }

// Where names the database for people: the SQLite file's path, or the
// PostgreSQL URL without its password.
func (db *DB) Where() string { return db.where }

// Path is the SQLite file's path, "" on PostgreSQL.
func (db *DB) Path() string { return db.path }

// SQL returns the connection pool, for package cache's hot-state tables on
// SQLite. Callers must not close it; Close does.
func (db *DB) SQL() *sql.DB { return db.sql }

// Ping checks that the database can record a report now: PostgreSQL
// answers, or the SQLite file's disk has at least Config.MinFree bytes free.
func (db *DB) Ping(ctx context.Context) error {
	if db.kind == SQLite {
		return db.checkRoom()
	}
	ctx, cancel := db.call(ctx)
	defer cancel()
	if err := db.sql.PingContext(ctx); err != nil {
		return db.unavailable("ping "+db.where, err)
	}
	return nil
}

// Close closes the pool.
func (db *DB) Close() error {
	if err := db.sql.Close(); err != nil {
		return db.scrub(fmt.Errorf("close %s: %w", db.where, err))
	}
	return nil
}

// call bounds one database call.
func (db *DB) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, db.timeout)
}

// errNoDataDir is returned by a Config with neither a data dir nor a URL.
var errNoDataDir = errors.New("no data dir and no database URL")
