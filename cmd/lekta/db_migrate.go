package main

import (
	"context"
	"fmt"
	"io"
)

// runDBMigrate is "lekta db migrate".
func runDBMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	rc, err := parseDBFlags("migrate", args, getenv, stderr)
	if err != nil {
		return err
	}
	db, err := connectDB(ctx, rc)
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := db.Migrate(ctx)
	if err != nil {
		return exitWith(exitNotRun, err)
	}
	st, err := db.Status(ctx)
	if err != nil {
		return exitWith(exitNotRun, err)
	}
	if len(applied) == 0 {
		fmt.Fprintf(stdout, "%s %s: schema version %d, up to date; nothing to do\n", db.Kind(), db.Where(), st.Version)
		return nil
	}
	fmt.Fprintf(stdout, "%s %s: applied %s; schema version %d\n", db.Kind(), db.Where(), names(applied), st.Version)
	return nil
}
