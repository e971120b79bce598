package cache

import (
	"context"
	"fmt"
	"time"
)

// Archive keeps reports by id for Limits.ReportTTL: the records role, in the
// SQL database. *records.DB implements it; the interface is declared here so
// that cache imports no project package. Reports are opaque blobs to it.
type Archive interface {
	// PutReport stores the report id, replacing any stored before.
	PutReport(ctx context.Context, id string, blob []byte, failed bool, at, expires time.Time) error
	// GetReport returns the report id if it has not expired at now; blob
	// is nil when there is none.
	GetReport(ctx context.Context, id string, now time.Time) (blob []byte, failed bool, at time.Time, err error)
	// Ping checks that the archive can keep a report now (it answers,
	// and has room). Admit asks it before admitting an audit.
	Ping(ctx context.Context) error
}

// archiveError wraps an archive failure so that callers fail closed.
func archiveError(action string, err error) error {
	return fmt.Errorf("%s: %w: %w", action, ErrUnavailable, err)
}

// archiveReport stores a report by id with the store's clock.
func archiveReport(ctx context.Context, a Archive, l Limits, id string, blob []byte, failed bool, now int64) error {
	at := time.UnixMilli(now)
	if err := a.PutReport(ctx, id, blob, failed, at, at.Add(l.ReportTTL)); err != nil {
		return archiveError("store report "+id, err)
	}
	return nil
}

// archived reads a report by id from the archive at now (unix ms).
func archived(ctx context.Context, a Archive, id string, now int64) (Entry, bool, error) {
	blob, failed, at, err := a.GetReport(ctx, id, time.UnixMilli(now))
	if err != nil {
		return Entry{}, false, archiveError("report "+id, err)
	}
	if blob == nil {
		return Entry{}, false, nil
	}
	body, err := decodeBlob(blob)
	if err != nil {
		return Entry{}, false, fmt.Errorf("report %s: %w", id, err)
	}
	return Entry{ID: id, Report: body, CompletedAt: at, Age: max(0, ms(now-at.UnixMilli())), Failed: failed}, true, nil
}
