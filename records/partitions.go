package records

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Partitions of the PostgreSQL tables (migration 0008): reports by day of
// completed_at, request_records by hour of at, each with a DEFAULT
// partition for rows no partition covers. SQLite has none.
const (
	partitionAhead = 48 * time.Hour
	// partitionLock serializes the creation and dropping of partitions
	// among the processes sharing the database.
	partitionLock = 7301024433
)

// partitioned is one partitioned table: its name, its partition key, the
// span of one partition, and the time layout of a partition's name suffix.
type partitioned struct {
	table, key string
	span       time.Duration
	layout     string
}

var (
	reportParts  = partitioned{table: "reports", key: "completed_at", span: 24 * time.Hour, layout: "20060102"}
	requestParts = partitioned{table: "request_records", key: "at", span: time.Hour, layout: "2006010215"}
)

// name is the partition that holds start.
func (p partitioned) name(start time.Time) string {
	return p.table + "_p" + start.UTC().Format(p.layout)
}

// start is when the partition called name begins; false for the DEFAULT
// partition or a name not of this table.
func (p partitioned) start(name string) (time.Time, bool) {
	suffix, ok := strings.CutPrefix(name, p.table+"_p")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation(p.layout, suffix, time.UTC)
	return t, err == nil
}

// Partition is one partition of a table, for `lekta db status`.
type Partition struct {
	Name string
	// From and To bound at or completed_at; both zero for the DEFAULT one.
	From, To time.Time
	// Rows is PostgreSQL's estimate (from the last ANALYZE); -1 when it
	// has none yet.
	Rows  int64
	Bytes int64
}

// partitions lists the partitions of p, oldest first, the DEFAULT one last.
func (db *DB) partitions(ctx context.Context, q querier, p partitioned) ([]Partition, error) {
	rows, err := q.QueryContext(ctx, `SELECT c.relname, c.reltuples::BIGINT, pg_total_relation_size(c.oid)
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = $1::regclass`, p.table)
	if err != nil {
		return nil, db.unavailable("list partitions of "+p.table+" in "+db.where, err)
	}
	defer rows.Close()
	var out []Partition
	for rows.Next() {
		var part Partition
		if err := rows.Scan(&part.Name, &part.Rows, &part.Bytes); err != nil {
			return nil, db.unavailable("list partitions of "+p.table+" in "+db.where, err)
		}
		if t, ok := p.start(part.Name); ok {
			part.From, part.To = t, t.Add(p.span)
		}
		out = append(out, part)
	}
	if err := rows.Err(); err != nil {
		return nil, db.unavailable("list partitions of "+p.table+" in "+db.where, err)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.From.IsZero() != b.From.IsZero() {
			return b.From.IsZero()
		}
		return a.From.Before(b.From)
	})
	return out, nil
}

// EnsurePartitions creates the partitions of the next 48 hours from now
// that are missing (PostgreSQL; nothing on SQLite). Open calls it, and so
// does every sweep: a row always finds its partition, never the DEFAULT
// one, while any process runs.
func (db *DB) EnsurePartitions(ctx context.Context, now time.Time) error {
	if !db.partitioned() {
		return nil
	}
	ctx, cancel := db.call(ctx)
	defer cancel()
	return db.writeTx(ctx, func(q querier) error {
		if err := db.lockPartitions(ctx, q); err != nil {
			return err
		}
		for _, p := range []partitioned{reportParts, requestParts} {
			have, err := db.partitions(ctx, q, p)
			if err != nil {
				return err
			}
			exists := map[string]bool{}
			for _, h := range have {
				exists[h.Name] = true
			}
			first := now.UTC().Truncate(p.span)
			for t := first; t.Before(now.Add(partitionAhead)); t = t.Add(p.span) {
				if exists[p.name(t)] {
					continue
				}
				if err := db.addPartition(ctx, q, p, t); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// lockPartitions takes, for the transaction q, the lock under which
// partitions are made and dropped.
func (db *DB) lockPartitions(ctx context.Context, q querier) error {
	if _, err := q.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", partitionLock); err != nil {
		return db.unavailable("lock partitions of "+db.where, err)
	}
	return nil
}

// partitioned reports whether reports and request_records are partitioned.
func (db *DB) partitioned() bool { return db.kind == PostgreSQL && !db.flat }

// addPartition makes the partition of p that starts at t: made apart,
// given the rows of its span that the DEFAULT partition caught meanwhile
// (a process that wrote before any created it), then attached, which
// PostgreSQL refuses while the DEFAULT partition holds such rows.
func (db *DB) addPartition(ctx context.Context, q querier, p partitioned, t time.Time) error {
	name, lo, hi := p.name(t), t.UnixMilli(), t.Add(p.span).UnixMilli()
	for _, stmt := range []string{
		fmt.Sprintf("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS)", name, p.table),
		fmt.Sprintf("WITH moved AS (DELETE FROM %s_default WHERE %s >= %d AND %s < %d RETURNING *) INSERT INTO %s SELECT * FROM moved",
			p.table, p.key, lo, p.key, hi, name),
		fmt.Sprintf("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%d) TO (%d)", p.table, name, lo, hi),
	} {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return db.unavailable("create partition "+name+" in "+db.where, err)
		}
	}
	return nil
}

// dropPartitions drops the partitions of p that end at or before cut, and
// returns PostgreSQL's estimate of the rows they held. With whileLive
// (reports, whose rows expire one by one long after their day), a
// partition stays while a row of it expires after cut: one probe of the
// expires_at index, never a scan past the rows the sweep deleted.
func (db *DB) dropPartitions(ctx context.Context, p partitioned, cut time.Time, whileLive bool) (int64, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	var dropped int64
	err := db.writeTx(ctx, func(q querier) error {
		if err := db.lockPartitions(ctx, q); err != nil {
			return err
		}
		have, err := db.partitions(ctx, q, p)
		if err != nil {
			return err
		}
		for _, h := range have {
			if h.From.IsZero() || h.To.After(cut) {
				continue
			}
			if whileLive {
				var live bool
				err := q.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+h.Name+" WHERE expires_at > $1)", cut.UnixMilli()).Scan(&live)
				if err != nil {
					return db.unavailable("read partition "+h.Name+" in "+db.where, err)
				}
				if live {
					continue
				}
			}
			if _, err := q.ExecContext(ctx, "DROP TABLE "+h.Name); err != nil {
				return db.unavailable("drop partition "+h.Name+" in "+db.where, err)
			}
			dropped += max(h.Rows, 0)
		}
		return nil
	})
	return dropped, err
}

// TableStatus is one table's size, for `lekta db status`.
type TableStatus struct {
	Table string
	// Rows is exact on SQLite, PostgreSQL's estimate otherwise.
	Rows  int64
	Bytes int64 // table and indexes; 0 when the engine does not say (SQLite)
	// Partitions are a partitioned table's (PostgreSQL), oldest first.
	Partitions []Partition
}

// Tables reports the size of the tables that grow with the audits:
// reports and request_records.
func (db *DB) Tables(ctx context.Context) ([]TableStatus, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	var out []TableStatus
	for _, p := range []partitioned{reportParts, requestParts} {
		ts := TableStatus{Table: p.table}
		if !db.partitioned() {
			if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM "+p.table).Scan(&ts.Rows); err != nil {
				return nil, db.unavailable("count "+p.table+" in "+db.where, err)
			}
			out = append(out, ts)
			continue
		}
		parts, err := db.partitions(ctx, db.sql, p)
		if err != nil {
			return nil, err
		}
		for _, part := range parts {
			ts.Rows += max(part.Rows, 0)
			ts.Bytes += part.Bytes
		}
		ts.Partitions = parts
		out = append(out, ts)
	}
	return out, nil
}
