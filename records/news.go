package records

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// reportsChannel is the PostgreSQL channel putReport sends each stored
// report's id on (pg_notify, delivered when the statement commits).
const reportsChannel = "lekta_reports"

// sqliteNewsPoll is how often Follow reads an SQLite file's data_version:
// a few microseconds, no table touched.
const sqliteNewsPoll = 100 * time.Millisecond

// Sink is told that reports were stored, to wake their waiters
// (wake.Hub implements it).
type Sink interface {
	// Signal: the report id may be stored now.
	Signal(id string)
	// All: some news may have been missed; every waiter reads again.
	All()
	// Waiting: somebody waits for a report.
	Waiting() bool
}

// Follow tells sink of the reports that any process sharing this database
// stores, until ctx ends.
//
// On PostgreSQL it listens on one connection of its own: every report
// stored sends its id (putReport). When the connection breaks it listens
// again a second later and then wakes every waiter, since what was sent
// meanwhile is lost.
//
// On SQLite, where no process can tell another, it reads the file's
// data_version every 100 ms on a connection of its own; a commit by any
// other connection (another process's audit, a write of this one) wakes
// every waiter, if any, to read again.
func (db *DB) Follow(ctx context.Context, sink Sink) {
	if db.kind == PostgreSQL {
		db.followPostgres(ctx, sink)
		return
	}
	db.followSQLite(ctx, sink)
}

func (db *DB) followPostgres(ctx context.Context, sink Sink) {
	for listened := false; ; {
		db.listen(ctx, func() {
			if listened {
				sink.All()
			}
			listened = true
		}, sink)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// listen holds one pooled connection, LISTENs, calls up once it listens
// and passes every notification to sink until the connection or ctx ends.
// The connection is then discarded (driver.ErrBadConn), never handed back
// to the pool still listening.
func (db *DB) listen(ctx context.Context, up func(), sink Sink) {
	c, err := db.sql.Conn(ctx)
	if err != nil {
		return // the database is down: the next try is a second away
	}
	defer c.Close()
	_ = c.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+reportsChannel); err != nil {
			return fmt.Errorf("%w: %w", driver.ErrBadConn, err)
		}
		up()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				return fmt.Errorf("%w: %w", driver.ErrBadConn, err)
			}
			sink.Signal(n.Payload)
		}
	})
}

func (db *DB) followSQLite(ctx context.Context, sink Sink) {
	f, err := sql.Open("sqlite", "file:"+db.path+"?mode=ro&_pragma=busy_timeout(1000)")
	if err != nil {
		return
	}
	defer f.Close()
	f.SetMaxOpenConns(1)
	t := time.NewTicker(sqliteNewsPoll)
	defer t.Stop()
	last := int64(-1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var v int64
		if err := f.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			last = -1
			continue
		}
		if last >= 0 && v != last && sink.Waiting() {
			sink.All()
		}
		last = v
	}
}
