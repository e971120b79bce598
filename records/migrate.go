package records

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations
var migrationFiles embed.FS

// Migration is one versioned schema change: the file
// migrations/<dialect>/NNNN_name.sql. Versions mean the same in both
// dialects and run from 1 without gaps.
type Migration struct {
	Version int
	Name    string
	sql     string
}

// String is "0001_init".
func (m Migration) String() string { return fmt.Sprintf("%04d_%s", m.Version, m.Name) }

// Status is where a database's schema stands.
type Status struct {
	// Version is the newest applied migration; 0 for a new database.
	Version int
	// Latest is the newest migration this binary knows.
	Latest int
	// Pending are the migrations Migrate would apply.
	Pending []Migration
}

// Current reports whether nothing is pending and the schema is not newer.
func (s Status) Current() bool { return s.Version == s.Latest }

// Known returns the migrations this binary has for kind, in order.
func Known(kind Kind) ([]Migration, error) {
	dir := "migrations/" + string(kind)
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".sql")
		num, label, ok2 := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || !ok2 || err != nil || len(num) != 4 {
			return nil, fmt.Errorf("embedded migration %s: want NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read embedded migration %s: %w", e.Name(), err)
		}
		if v != len(out)+1 {
			return nil, fmt.Errorf("embedded migration %s: version %d follows %d", e.Name(), v, len(out))
		}
		out = append(out, Migration{Version: v, Name: label, sql: string(b)})
	}
	return out, nil
}

// appliedRow is one row of schema_migrations.
type appliedRow struct {
	version int
	name    string
}

// querier is what both a pool, a connection and a transaction offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Status reads the schema version without changing anything. A schema newer
// than this binary gives the Status and an error wrapping ErrSchemaTooNew.
func (db *DB) Status(ctx context.Context) (Status, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	known, err := Known(db.kind)
	if err != nil {
		return Status{}, err
	}
	rows, err := db.applied(ctx, db.sql)
	if err != nil {
		return Status{}, err
	}
	return db.status(known, rows)
}

// status compares the applied rows with the known migrations.
func (db *DB) status(known []Migration, rows []appliedRow) (Status, error) {
	st := Status{Latest: len(known)}
	if n := len(rows); n > 0 && rows[n-1].version > st.Latest {
		st.Version = rows[n-1].version
		return st, fmt.Errorf("schema of %s: %w: version %d, this binary knows up to %d; run a newer lekta or restore a backup",
			db.where, ErrSchemaTooNew, st.Version, st.Latest)
	}
	for i, r := range rows {
		if r.version != i+1 {
			return st, fmt.Errorf("schema of %s: migration %d is recorded without %d before it", db.where, r.version, i+1)
		}
		if want := known[r.version-1].Name; r.name != want {
			return st, fmt.Errorf("schema of %s: migration %d is %q there but %q in this binary: it was made by another build of lekta",
				db.where, r.version, r.name, want)
		}
		st.Version = r.version
	}
	st.Pending = known[st.Version:]
	return st, nil
}

// applied reads schema_migrations in order; none when it does not exist.
func (db *DB) applied(ctx context.Context, q querier) ([]appliedRow, error) {
	var exists bool
	if err := q.QueryRowContext(ctx, db.q.migrationsExist).Scan(&exists); err != nil {
		return nil, db.unavailable("read schema of "+db.where, err)
	}
	if !exists {
		return nil, nil
	}
	rs, err := q.QueryContext(ctx, "SELECT version, name FROM schema_migrations ORDER BY version")
	if err != nil {
		return nil, db.unavailable("read schema of "+db.where, err)
	}
	defer rs.Close()
	var out []appliedRow
	for rs.Next() {
		var r appliedRow
		if err := rs.Scan(&r.version, &r.name); err != nil {
			return nil, db.unavailable("read schema of "+db.where, err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, db.unavailable("read schema of "+db.where, err)
	}
	return out, nil
}

// Migrate applies the pending migrations in one transaction, holding the
// database's write lock (SQLite) or an advisory lock (PostgreSQL) so that
// processes starting together apply each once. A current schema is left
// untouched, without taking any lock; a newer one is refused with
// ErrSchemaTooNew before anything is written. It returns what it applied.
func (db *DB) Migrate(ctx context.Context) ([]Migration, error) {
	return db.migrateTo(ctx, 0)
}

// MigrateTo is Migrate up to version upTo, 0 for all: the store bench
// (make bench-store) measures a database of an earlier version with it.
// A server refuses to start on a schema that is not current.
func (db *DB) MigrateTo(ctx context.Context, upTo int) ([]Migration, error) {
	applied, err := db.migrateTo(ctx, upTo)
	if err == nil && db.kind == PostgreSQL && upTo > 0 && upTo < 8 {
		db.q, db.flat = postgresQueriesBefore8, true
	}
	return applied, err
}

// migrateTo is Migrate up to version upTo, 0 for all.
func (db *DB) migrateTo(ctx context.Context, upTo int) ([]Migration, error) {
	st, err := db.Status(ctx)
	if err != nil || st.Current() {
		return nil, err
	}
	ctx, cancel := db.call(ctx)
	defer cancel()
	known, err := Known(db.kind)
	if err != nil {
		return nil, err
	}
	var applied []Migration
	err = db.writeTx(ctx, func(q querier) error {
		if db.kind == PostgreSQL {
			if _, err := q.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7301024431)"); err != nil {
				return db.unavailable("lock schema of "+db.where, err)
			}
		}
		rows, err := db.applied(ctx, q)
		if err != nil {
			return err
		}
		st, err := db.status(known, rows) // another process may have migrated meanwhile
		if err != nil || st.Current() {
			return err
		}
		if _, err := q.ExecContext(ctx, db.q.createMigrations); err != nil {
			return db.unavailable("create schema_migrations in "+db.where, err)
		}
		for _, m := range st.Pending {
			if upTo > 0 && m.Version > upTo {
				break
			}
			if _, err := q.ExecContext(ctx, m.sql); err != nil {
				return db.unavailable("apply migration "+m.String()+" to "+db.where, err)
			}
			if _, err := q.ExecContext(ctx, db.q.recordMigration, m.Version, m.Name, time.Now().UnixMilli()); err != nil {
				return db.unavailable("record migration "+m.String()+" in "+db.where, err)
			}
			applied = append(applied, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// writeTx runs f in a transaction that holds the write lock from its start
// (BEGIN IMMEDIATE on SQLite), committing when f returns nil.
func (db *DB) writeTx(ctx context.Context, f func(q querier) error) error {
	if db.kind == PostgreSQL {
		tx, err := db.sql.BeginTx(ctx, nil)
		if err != nil {
			return db.unavailable("begin transaction on "+db.where, err)
		}
		if err := f(tx); err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return db.unavailable("commit to "+db.where, err)
		}
		return nil
	}
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return db.unavailable("open "+db.where, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return db.unavailable("lock "+db.where, err)
	}
	if err := f(conn); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return db.unavailable("commit to "+db.where, err)
	}
	return nil
}

// errNotSQLite is returned by SQLite-only operations on PostgreSQL.
var errNotSQLite = errors.New("not a SQLite database")
