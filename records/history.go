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
	// Disallowed is set by Recent, for an entry read without its summary,
	// when the summary holds a robots.disallowed finding.
	Disallowed bool
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
	e.TextShare, e.LinkShare = floatPtr(ts), floatPtr(ls)
	e.Changes, e.Summary = json.RawMessage(changes), json.RawMessage(summary)
	return e, err
}

// floatPtr is a nullable column's value, nil for NULL.
func floatPtr(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	return &f.Float64
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

// Recent returns the newest n entries of each of the given sites, newest
// first, keyed by site id: what the dashboard draws, one indexed query a
// site on one connection (SQLite) or one lateral query (PostgreSQL). Only
// the newest entry of a site carries its summary; every entry carries
// Disallowed, and none its changes.
func (db *DB) Recent(ctx context.Context, siteIDs []string, n int) (map[string][]Entry, error) {
	ctx, cancel := db.call(ctx)
	defer cancel()
	out := make(map[string][]Entry, len(siteIDs))
	if db.kind == PostgreSQL {
		rs, err := db.sql.QueryContext(ctx, `SELECT s.id, h.ran_at, h.trigger_name, h.report_id, h.status, h.rule, h.text_share, h.link_share,
	h.summary LIKE '`+disallowedLike+`', CASE WHEN h.rn = 1 THEN h.summary ELSE '' END
FROM unnest($1::text[]) AS s(id) CROSS JOIN LATERAL (
	SELECT ran_at, trigger_name, report_id, status, rule, text_share, link_share, summary, row_number() OVER () AS rn
	FROM (SELECT * FROM history WHERE site_id = s.id ORDER BY ran_at DESC, id DESC LIMIT $2) newest) h
ORDER BY s.id, h.rn`, siteIDs, n)
		if err == nil {
			err = scanRecent(rs, out)
		}
		if err != nil {
			return nil, db.unavailable("read history from "+db.where, err)
		}
		return out, nil
	}
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return nil, db.unavailable("read history from "+db.where, err)
	}
	defer conn.Close()
	for _, id := range siteIDs {
		rs, err := conn.QueryContext(ctx, `SELECT site_id, ran_at, trigger_name, report_id, status, rule, text_share, link_share,
	summary LIKE '`+disallowedLike+`', '' FROM history WHERE site_id = ? ORDER BY ran_at DESC, id DESC LIMIT ?`, id, n)
		if err == nil {
			err = scanRecent(rs, out)
		}
		if es := out[id]; err == nil && len(es) > 0 {
			var summary string
			err = conn.QueryRowContext(ctx, `SELECT summary FROM history WHERE site_id = ? ORDER BY ran_at DESC, id DESC LIMIT 1`, id).Scan(&summary)
			es[0].Summary = json.RawMessage(summary)
		}
		if err != nil {
			return nil, db.unavailable("read history from "+db.where, err)
		}
	}
	return out, nil
}

// disallowedLike matches a summary holding a robots.disallowed finding.
const disallowedLike = `%"code":"robots.disallowed"%`

// scanRecent reads Recent's rows (site, ran_at, trigger, report, status,
// rule, shares, disallowed, summary or ”) into out, and closes rs.
func scanRecent(rs *sql.Rows, out map[string][]Entry) error {
	defer rs.Close()
	for rs.Next() {
		var e Entry
		var ran int64
		var ts, ls sql.NullFloat64
		var summary string
		if err := rs.Scan(&e.SiteID, &ran, &e.Trigger, &e.ReportID, &e.Status, &e.Rule, &ts, &ls, &e.Disallowed, &summary); err != nil {
			return err
		}
		e.RanAt, e.TextShare, e.LinkShare = fromMS(ran), floatPtr(ts), floatPtr(ls)
		if summary != "" {
			e.Summary = json.RawMessage(summary)
		}
		out[e.SiteID] = append(out[e.SiteID], e)
	}
	return rs.Err()
}
