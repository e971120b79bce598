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

// archived reads a report by id from the archive at now (unix ms),
// following a reference made by Refer one hop to the report it points at.
func archived(ctx context.Context, a Archive, id string, now int64) (Entry, bool, error) {
	e, found, err := archivedBlob(ctx, a, id, now)
	if err != nil || !found {
		return e, found, err
	}
	target, age, isRef, err := parseRef(e.Report)
	switch {
	case err != nil:
		return Entry{}, false, fmt.Errorf("report %s: %w", id, err)
	case !isRef:
		return decodedEntry(e)
	}
	t, found, err := archivedBlob(ctx, a, target, now)
	if err != nil || !found {
		return Entry{}, found, err
	}
	if _, _, isRef, _ := parseRef(t.Report); isRef {
		return Entry{}, false, fmt.Errorf("report %s: a reference to a reference", id)
	}
	t, found, err = decodedEntry(t)
	return referred(id, age, t), found, err
}

// decodedEntry decodes the blob an entry read from the archive holds.
func decodedEntry(e Entry) (Entry, bool, error) {
	body, err := decodeBlob(e.Report)
	if err != nil {
		return Entry{}, false, fmt.Errorf("report %s: %w", e.ID, err)
	}
	e.Report = body
	return e, true, nil
}

// archivedBlob reads the stored blob of id, undecoded, at now (unix ms).
func archivedBlob(ctx context.Context, a Archive, id string, now int64) (Entry, bool, error) {
	blob, failed, at, err := a.GetReport(ctx, id, time.UnixMilli(now))
	if err != nil {
		return Entry{}, false, archiveError("report "+id, err)
	}
	if blob == nil {
		return Entry{}, false, nil
	}
	return Entry{ID: id, Report: blob, CompletedAt: at, Age: max(0, ms(now-at.UnixMilli())), Failed: failed}, true, nil
}
