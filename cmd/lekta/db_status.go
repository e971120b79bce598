package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"lekta.dev/lekta/records"
)

// runDBStatus is "lekta db status": read-only, it never creates a database.
func runDBStatus(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	rc, err := parseDBFlags("status", args, getenv, stderr)
	if err != nil {
		return err
	}
	if rc.DatabaseURL == "" {
		path := filepath.Join(rc.DataDir, records.FileName)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			known, err := records.Known(records.SQLite)
			if err != nil {
				return exitWith(exitNotRun, err)
			}
			fmt.Fprintf(stdout, "database: sqlite %s (not created yet)\nschema:   none; this binary knows version %d: %d pending (%s); the first lekta serve, lekta audit or lekta db migrate creates it\n",
				path, len(known), len(known), names(known))
			return exitWith(exitFailure, nil)
		}
	}
	db, err := connectDB(ctx, rc)
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Fprintf(stdout, "database: %s %s\n", db.Kind(), db.Where())
	st, err := db.Status(ctx)
	switch {
	case errors.Is(err, records.ErrSchemaTooNew):
		fmt.Fprintf(stdout, "schema:   version %d, newer than this binary knows (%d): this lekta refuses it\n", st.Version, st.Latest)
		return exitWith(exitNotRun, err)
	case err != nil:
		return exitWith(exitNotRun, err)
	case st.Current():
		fmt.Fprintf(stdout, "schema:   version %d, up to date\n", st.Version)
		return printTables(ctx, stdout, db)
	}
	fmt.Fprintf(stdout, "schema:   version %d; this binary knows version %d: %d pending (%s); run lekta db migrate\n",
		st.Version, st.Latest, len(st.Pending), names(st.Pending))
	return exitWith(exitFailure, nil)
}

// printTables writes the size of the tables that grow with the audits and,
// on PostgreSQL, each of their partitions (rows are PostgreSQL's estimate
// there, from its last ANALYZE).
func printTables(ctx context.Context, stdout io.Writer, db *records.DB) error {
	tables, err := db.Tables(ctx)
	if err != nil {
		return exitWith(exitNotRun, err)
	}
	fmt.Fprintln(stdout, "tables:")
	for _, t := range tables {
		if t.Partitions == nil {
			fmt.Fprintf(stdout, "  %-16s %d rows\n", t.Table, t.Rows)
			continue
		}
		fmt.Fprintf(stdout, "  %-16s ~%d rows, %s, %d partitions\n", t.Table, t.Rows, records.Size(t.Bytes), len(t.Partitions))
		for _, p := range t.Partitions {
			span := "rows no partition covers"
			if !p.From.IsZero() {
				span = p.From.Format("2006-01-02 15:04") + " to " + p.To.Format("2006-01-02 15:04") + " UTC"
			}
			rows := "not analyzed yet"
			if p.Rows >= 0 {
				rows = fmt.Sprintf("~%d rows", p.Rows)
			}
			fmt.Fprintf(stdout, "    %-30s %-40s %s, %s\n", p.Name, span, rows, records.Size(p.Bytes))
		}
	}
	return nil
}
