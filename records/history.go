package records

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// Entry is one re-audit of a saved site in its history.
type Entry struct {
	// ID derives from the site and the due time (HistoryID).
	ID       string
	SiteID   string
	DueAt    time.Time
	RanAt    time.Time
	Trigger  string
	ReportID string
	Status   string
	// Rule is the robots.txt rule of a skipped re-audit.
	Rule       string
	TextShare  *float64
	LinkShare  *float64
	Critical   int
	Regression bool
	// Changes is the comparison with the previous entry; Summary is what
	// the next entry is compared with. Both JSON, derived values only.
	Changes json.RawMessage
	Summary json.RawMessage
	// ETag and LastModified are the plain response's validators.
	ETag         string
	LastModified string
}

// HistoryID is the entry id of the site's re-audit due at due: a job run
// twice (after a rescue) finds the entry of its first run.
func HistoryID(siteID string, due time.Time) string {
	sum := sha256.Sum256([]byte(siteID + "\x00" + strconv.FormatInt(due.UnixMilli(), 10)))
	return "h_" + hex.EncodeToString(sum[:10])
}

const entryCols = "id, site_id, due_at, ran_at, trigger_name, report_id, status, rule, text_share, link_share, critical, regression, changes, summary, etag, last_modified"

func scanEntry(row interface{ Scan(...any) error }) (Entry, error) {
	var e Entry
	var due, ran, reg int64
	var ts, ls sql.NullFloat64
	var changes, summary string
	err := row.Scan(&e.ID, &e.SiteID, &due, &ran, &e.Trigger, &e.ReportID, &e.Status, &e.Rule, &ts, &ls, &e.Critical, &reg, &changes, &summary, &e.ETag, &e.LastModified)
	e.DueAt, e.RanAt, e.Regression = fromMS(due), fromMS(ran), reg != 0
	if ts.Valid {
		e.TextShare = &ts.Float64
	}
	if ls.Valid {
		e.LinkShare = &ls.Float64
	}
	e.Changes, e.Summary = json.RawMessage(changes), json.RawMessage(summary)
	return e, err
}

func nullable(f *float64) sql.NullFloat64 {
	if f == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: *f, Valid: true}
}

func jsonText(b json.RawMessage) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}

// AddEntry records e unless an entry with its id exists; it reports
// whether it was added.
func (db *DB) AddEntry(ctx context.Context, e Entry) (bool, error) {
	reg := 0
	if e.Regression {
		reg = 1
	}
	res, err := db.exec(ctx, "record re-audit of "+e.SiteID,
		"INSERT INTO history ("+entryCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
		e.ID, e.SiteID, ms(e.DueAt), ms(e.RanAt), e.Trigger, e.ReportID, e.Status, e.Rule, nullable(e.TextShare), nullable(e.LinkShare),
		e.Critical, reg, jsonText(e.Changes), jsonText(e.Summary), e.ETag, e.LastModified)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// HasEntry reports whether the entry id exists.
func (db *DB) HasEntry(ctx context.Context, id string) (bool, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	var n int
	if err := db.sql.QueryRowContext(ctx, db.rebind("SELECT count(*) FROM history WHERE id = ?"), id).Scan(&n); err != nil {
		return false, db.unavailable("read history from "+db.where, err)
	}
	return n > 0, nil
}

// History returns up to limit entries of the site that ran before before
// (all when zero), newest first.
func (db *DB) History(ctx context.Context, siteID string, limit int, before time.Time) ([]Entry, error) {
	if before.IsZero() {
		before = time.UnixMilli(1<<62 - 1)
	}
	ctx, cancel := db.call(ctx)
	defer cancel()
	rs, err := db.sql.QueryContext(ctx, db.rebind("SELECT "+entryCols+" FROM history WHERE site_id = ? AND ran_at < ? ORDER BY ran_at DESC, id DESC LIMIT ?"),
		siteID, before.UnixMilli(), limit)
	if err != nil {
		return nil, db.unavailable("read history from "+db.where, err)
	}
	defer rs.Close()
	var out []Entry
	for rs.Next() {
		e, err := scanEntry(rs)
		if err != nil {
			return nil, db.unavailable("read history from "+db.where, err)
		}
		out = append(out, e)
	}
	if err := rs.Err(); err != nil {
		return nil, db.unavailable("read history from "+db.where, err)
	}
	return out, nil
}

// LatestEntry is the site's newest entry; ErrNotFound when it has none.
func (db *DB) LatestEntry(ctx context.Context, siteID string) (Entry, error) {
	es, err := db.History(ctx, siteID, 1, time.Time{})
	if err != nil {
		return Entry{}, err
	}
	if len(es) == 0 {
		return Entry{}, ErrNotFound
	}
	return es[0], nil
}

// errNoRows is sql.ErrNoRows, for the other files.
var errNoRows = sql.ErrNoRows

// EntryByReport is the history entry whose report this is; ErrNotFound
// for a report that is not a re-audit.
func (db *DB) EntryByReport(ctx context.Context, reportID string) (Entry, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	e, err := scanEntry(db.sql.QueryRowContext(ctx, db.rebind("SELECT "+entryCols+" FROM history WHERE report_id = ? AND report_id <> '' LIMIT 1"), reportID))
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, db.unavailable("read history from "+db.where, err)
	}
	return e, nil
}
