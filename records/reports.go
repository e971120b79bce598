package records

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// PutReport stores the report id, replacing any stored before under that
// id: body (opaque bytes, at most a few MiB), whether the audit failed, when
// it completed and when it expires. Package cache calls it when an audit
// completes, before it releases the host's lease.
func (db *DB) PutReport(ctx context.Context, id string, body []byte, failed bool, at, expires time.Time) error {
	ctx, cancel := db.call(ctx)
	defer cancel()
	if _, err := db.sql.ExecContext(ctx, db.q.putReport, id, at.UnixMilli(), expires.UnixMilli(), failed, body); err != nil {
		return db.unavailable("store report "+id+" in "+db.where, err)
	}
	return nil
}

// GetReport returns the report id if it has not expired at now; body is nil
// when there is no such report.
func (db *DB) GetReport(ctx context.Context, id string, now time.Time) (body []byte, failed bool, at time.Time, err error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	var atMS int64
	err = db.sql.QueryRowContext(ctx, db.q.getReport, id, now.UnixMilli()).Scan(&atMS, &failed, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, time.Time{}, nil
	}
	if err != nil {
		return nil, false, time.Time{}, db.unavailable("read report "+id+" from "+db.where, err)
	}
	if body == nil {
		body = []byte{} // stored empty: still a report
	}
	return body, failed, time.UnixMilli(atMS), nil
}

// Sweep deletes the reports that expired at now, in small batches so that
// it never holds the write lock for long, and returns how many it deleted.
// On PostgreSQL it also creates the partitions of the next 48 hours and
// drops the days whose reports have all expired.
func (db *DB) Sweep(ctx context.Context, now time.Time) (int64, error) {
	total, err := db.sweepReports(ctx, now)
	if err != nil || !db.partitioned() {
		return total, err
	}
	if err := db.EnsurePartitions(ctx, now); err != nil {
		return total, err
	}
	_, err = db.dropPartitions(ctx, reportParts, now, true)
	return total, err
}

// sweepReports deletes the reports that expired at now, 500 at a time.
func (db *DB) sweepReports(ctx context.Context, now time.Time) (int64, error) {
	return db.deleteBatches(ctx, db.q.sweepReports, now.UnixMilli(), "delete expired reports from ")
}

// sweepBatch is how many rows one statement of a sweep deletes at most
// (the LIMIT of the sweep statements in queries.go).
const sweepBatch = 500

// deleteBatches runs stmt, a sweep statement deleting at most sweepBatch
// rows at or before cut, until a run deletes fewer, so that no statement
// holds the write lock for long; it returns how many it deleted. what
// starts the error's action ("delete expired reports from ").
func (db *DB) deleteBatches(ctx context.Context, stmt string, cut int64, what string) (int64, error) {
	var total int64
	for {
		cctx, cancel := db.call(ctx)
		res, err := db.sql.ExecContext(cctx, stmt, cut)
		cancel()
		if err != nil {
			return total, db.unavailable(what+db.where, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, db.unavailable(what+db.where, err)
		}
		total += n
		if n < sweepBatch {
			return total, nil
		}
	}
}
