package records

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"lekta.dev/lekta/verify"
)

// Request is one request record: a request LektaBot sent to a site, in
// derived technical values only (no bodies, no cookies, the query string
// only as a hash), kept for --request-records-ttl so that a site operator
// can verify a log line.
type Request struct {
	// At is when the request was sent, to the millisecond.
	At time.Time `json:"time"`
	// Lane is "robots", "plain" or "render".
	Lane string `json:"lane"`
	// Method, Scheme, Host (lower-case), Port (the effective one) and Path
	// (as sent) of the request.
	Method string `json:"method"`
	Scheme string `json:"scheme"`
	Host   string `json:"host"`
	Port   int    `json:"port"`
	Path   string `json:"path"`
	// QueryHash is verify.QueryHash of the query string, "" without one.
	QueryHash string `json:"query_hash"`
	// Remote is the site's address our connection reached; Local the
	// address and port it left from.
	Remote netip.AddrPort `json:"remote"`
	Local  netip.AddrPort `json:"local"`
	// Status is the response status, 0 when there was none; ErrorClass
	// then says why ("timeout", "reset", "tls", "error", "refused").
	Status     int    `json:"status"`
	ErrorClass string `json:"error,omitempty"`
	// Bytes is the size of the response body as read.
	Bytes int64 `json:"bytes"`
	// AuditID is the audit that sent the request.
	AuditID string `json:"audit_id"`
}

// requestColumns are the columns PutRequests writes, in order.
const requestColumns = "at, lane, method, scheme, host, port, path, query_hash, remote_addr, remote_port, local_addr, local_port, status, error_class, bytes, audit_id"

// requestBatch is how many records one INSERT statement writes.
const requestBatch = 256

// PutRequests stores request records in one transaction, a few hundred
// rows per statement, so that an audit pays one round trip per batch.
func (db *DB) PutRequests(ctx context.Context, rs []Request) error {
	if len(rs) == 0 {
		return nil
	}
	ctx, cancel := db.call(ctx)
	defer cancel()
	return db.writeTx(ctx, func(q querier) error {
		for start := 0; start < len(rs); start += requestBatch {
			chunk := rs[start:min(start+requestBatch, len(rs))]
			stmt, args := db.insertRequests(chunk)
			if _, err := q.ExecContext(ctx, stmt, args...); err != nil {
				return db.unavailable("store request records in "+db.where, err)
			}
		}
		return nil
	})
}

// insertRequests builds one multi-row INSERT.
func (db *DB) insertRequests(rs []Request) (string, []any) {
	const cols = 16
	var b strings.Builder
	b.WriteString("INSERT INTO request_records (" + requestColumns + ") VALUES ")
	args := make([]any, 0, len(rs)*cols)
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			if db.kind == PostgreSQL {
				fmt.Fprintf(&b, "$%d", i*cols+j+1)
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
		args = append(args, r.At.UnixMilli(), r.Lane, r.Method, r.Scheme, strings.ToLower(r.Host), r.Port, r.Path, r.QueryHash,
			addrText(r.Remote), int(r.Remote.Port()), addrText(r.Local), int(r.Local.Port()),
			r.Status, r.ErrorClass, r.Bytes, r.AuditID)
	}
	return b.String(), args
}

// addrText is an address without its port, "" when unknown.
func addrText(ap netip.AddrPort) string {
	if !ap.IsValid() {
		return ""
	}
	return ap.Addr().String()
}

// MaxRequests caps how many records one QueryRequests call returns.
const MaxRequests = 10000

// QueryRequests returns the records of host (case-insensitive) sent within
// [from, to], oldest first, at most limit of them (MaxRequests when limit
// is zero or more).
func (db *DB) QueryRequests(ctx context.Context, host string, from, to time.Time, limit int) ([]Request, error) {
	if limit <= 0 || limit > MaxRequests {
		limit = MaxRequests
	}
	ctx, cancel := db.call(ctx)
	defer cancel()
	rows, err := db.sql.QueryContext(ctx, db.q.queryRequests, strings.ToLower(host), from.UnixMilli(), to.UnixMilli(), limit)
	if err != nil {
		return nil, db.unavailable("read request records from "+db.where, err)
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		var r Request
		var at int64
		var remote, local string
		var rport, lport int
		if err := rows.Scan(&at, &r.Lane, &r.Method, &r.Scheme, &r.Host, &r.Port, &r.Path, &r.QueryHash,
			&remote, &rport, &local, &lport, &r.Status, &r.ErrorClass, &r.Bytes, &r.AuditID); err != nil {
			return nil, db.unavailable("read request records from "+db.where, err)
		}
		r.At = time.UnixMilli(at).UTC()
		r.Remote, r.Local = addrPort(remote, rport), addrPort(local, lport)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, db.unavailable("read request records from "+db.where, err)
	}
	return out, nil
}

// addrPort joins a stored address and port; the zero value when unknown.
func addrPort(addr string, port int) netip.AddrPort {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(a, uint16(port))
}

// SweepRequests deletes the request records sent at or before now-ttl, in
// small batches, and returns how many it deleted. On PostgreSQL whole hours
// are dropped once all their records are that old (counted by PostgreSQL's
// estimate), so a record outlives the TTL by less than an hour; only rows
// the DEFAULT partition caught are deleted one by one.
func (db *DB) SweepRequests(ctx context.Context, now time.Time, ttl time.Duration) (int64, error) {
	var total int64
	if db.partitioned() {
		n, err := db.dropPartitions(ctx, requestParts, now.Add(-ttl), false)
		if err != nil {
			return n, err
		}
		total = n
	}
	n, err := db.deleteBatches(ctx, db.q.sweepRequests, now.Add(-ttl).UnixMilli(), "delete expired request records from ")
	return total + n, err
}

// Candidates implements verify.Store: the records of host sent within
// [from, to].
func (db *DB) Candidates(ctx context.Context, host string, from, to time.Time) ([]verify.Record, error) {
	rs, err := db.QueryRequests(ctx, host, from, to, MaxRequests)
	if err != nil {
		return nil, err
	}
	out := make([]verify.Record, len(rs))
	for i, r := range rs {
		out[i] = verify.Record{At: r.At, Lane: r.Lane, Method: r.Method, Host: r.Host, Port: r.Port,
			Path: r.Path, QueryHash: r.QueryHash, Source: r.Local.Addr()}
	}
	return out, nil
}

var _ verify.Store = (*DB)(nil)
