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
		return nil
	}
	fmt.Fprintf(stdout, "schema:   version %d; this binary knows version %d: %d pending (%s); run lekta db migrate\n",
		st.Version, st.Latest, len(st.Pending), names(st.Pending))
	return exitWith(exitFailure, nil)
}
