package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"time"

	"lekta.dev/lekta/records"
)

// tableSize is one table's bytes (all partitions), table and indexes.
type tableSize struct {
	table        string
	bytes, index int64
	// keep is how long a row stays at the default retentions, for the
	// size of a database at a million audits a day.
	keep time.Duration
}

// sizes reads the bytes of the tables an audit writes to.
func sizes(ctx context.Context, db *records.DB) ([]tableSize, error) {
	if _, err := db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
		return nil, err
	}
	out := []tableSize{{table: "reports", keep: 30 * 24 * time.Hour}, {table: "request_records", keep: 7 * 24 * time.Hour},
		{table: "river_job", keep: time.Hour}, {table: "history"}}
	for i := range out {
		err := db.SQL().QueryRowContext(ctx, `SELECT coalesce(sum(pg_table_size(relid)), 0), coalesce(sum(pg_indexes_size(relid)), 0)
			FROM (SELECT relid FROM pg_partition_tree($1::regclass) UNION SELECT $1::regclass) t`, out[i].table).Scan(&out[i].bytes, &out[i].index)
		if err != nil {
			return nil, fmt.Errorf("size of %s: %w", out[i].table, err)
		}
	}
	return out, nil
}

// replaceDatabase is server with its database name replaced by name.
func replaceDatabase(server, name string) (string, error) {
	u, err := url.Parse(server)
	if err != nil || u.Path == "" {
		return "", errNoDatabase
	}
	u.Path = "/" + name
	return u.String(), nil
}

// print writes one schema's figures.
func (res storeResult) print(out io.Writer) {
	label := "version 8 (partitioned)"
	if res.version < 8 {
		label = fmt.Sprintf("version %d (before partitioning)", res.version)
	}
	fmt.Fprintf(out, "\nschema %s\n", label)
	fmt.Fprintf(out, "  sustained: %.1f audits/s at the fixed rate, %.1f audits/s flat out (%.1f M a day)\n",
		res.fixedRate, res.maxRate, res.maxRate*86400/1e6)
	fmt.Fprintln(out, "  latency by operation, both phases (n, p50, p99):")
	for _, l := range res.lat.lines() {
		fmt.Fprintln(out, l)
	}
	fmt.Fprintln(out, "  bytes per audit (table + indexes), and at a million audits a day:")
	var day, kept float64
	for _, s := range res.sizes {
		per := float64(s.bytes+s.index) / float64(res.audits)
		day += per * 1e6
		kept += per * 1e6 * s.keep.Hours() / 24
		fmt.Fprintf(out, "    %-16s %8.0f + %7.0f B   %7s a day\n", s.table, float64(s.bytes)/float64(res.audits),
			float64(s.index)/float64(res.audits), records.Size(int64(per*1e6)))
	}
	fmt.Fprintf(out, "    written a day: %s; kept at the default retentions (reports 30 d, request records 7 d, River's finished jobs 1 h; history not counted): %s\n",
		records.Size(int64(day)), records.Size(int64(kept)))
	fmt.Fprintf(out, "  sweep of the run's request records (%.1f simulated hours, %s): %s; a day's ≈ %s\n",
		res.simHours, res.sweptWhat(), res.sweep.Round(time.Millisecond), res.sweepPerDay().Round(time.Millisecond))
	fmt.Fprintf(out, "  sweep of %d expired reports: %s; a million (a day's) ≈ %s\n", res.reportsExpired,
		res.reportSweep.Round(time.Millisecond), time.Duration(float64(res.reportSweep)*1e6/float64(max(res.reportsExpired, 1))).Round(time.Millisecond))
}

// printRatios compares the schemas, measured in this one run.
func printRatios(out io.Writer, rs []storeResult) {
	if len(rs) != 2 {
		return
	}
	a, b := rs[0], rs[1]
	fmt.Fprintf(out, "\npartitioned / before, same rate, one run: flat-out rate %.2f×, request-record sweep per day %.3f×\n",
		b.maxRate/a.maxRate, float64(b.sweepPerDay())/max(float64(a.sweepPerDay()), 1))
}

// sweptWhat says what the request-record sweep removed.
func (res storeResult) sweptWhat() string {
	if res.dropped > 0 {
		return fmt.Sprintf("%d hourly partitions dropped", res.dropped)
	}
	return fmt.Sprintf("%d rows deleted", res.sweepRows)
}

// sweepPerDay is the request-record sweep's cost for a day at a million
// audits a day: 24 hourly partitions dropped, or every one of its rows
// deleted.
func (res storeResult) sweepPerDay() time.Duration {
	if res.dropped > 0 {
		return time.Duration(float64(res.sweep) * 24 / float64(res.dropped))
	}
	return time.Duration(float64(res.sweep) * 1e6 * float64(res.perAudit) / float64(max(res.sweepRows, 1)))
}
