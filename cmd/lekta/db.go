package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"lekta.dev/lekta/records"
)

const dbUsage = `usage: lekta db status [flags]
       lekta db migrate [flags]

status   says which database the flags name, its schema version and the
         migrations this binary would apply.
         Exit status: 0 up to date, 1 migrations pending (or no database
         yet), 2 bad flags, 3 the database cannot answer or its schema is
         newer than this binary.
migrate  applies the pending migrations in one transaction, for operators
         who migrate before they deploy (serve and audit also migrate at
         start-up). A newer schema is refused and left untouched.
         Exit status: 0 done (or nothing to do), 2 bad flags, 3 failed.
`

// runDB is "lekta db status|migrate".
func runDB(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, dbUsage)
		return exitWith(exitBadInput, nil)
	}
	switch args[0] {
	case "status":
		return runDBStatus(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		return runDBMigrate(ctx, args[1:], getenv, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, dbUsage)
		return nil
	}
	fmt.Fprint(stderr, dbUsage)
	return exitWith(exitBadInput, fmt.Errorf("db: unknown command %q", args[0]))
}

// parseDBFlags reads the flags of a db subcommand into a records configuration.
func parseDBFlags(name string, args []string, getenv func(string) string, stderr io.Writer) (records.Config, error) {
	var d databaseFlags
	fs := newFlagSet("db "+name, dbUsage, stderr)
	d.register(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return records.Config{}, exitWith(exitBadInput, flagError(err))
	}
	if fs.NArg() != 0 {
		return records.Config{}, exitWith(exitBadInput, usageError(fs, fmt.Errorf("db %s takes no arguments, got %q", name, fs.Args())))
	}
	if d.databaseURL != "" {
		if err := records.CheckURL(d.databaseURL); err != nil {
			return records.Config{}, exitWith(exitBadInput, err)
		}
	}
	rc, err := d.config(getenv)
	if err != nil {
		return records.Config{}, exitWith(exitBadInput, err)
	}
	return rc, nil
}

// connectDB opens the database without touching its schema; errors carry
// their exit status.
func connectDB(ctx context.Context, rc records.Config) (*records.DB, error) {
	db, err := records.Connect(ctx, rc)
	switch {
	case errors.Is(err, records.ErrBadConfig):
		return nil, exitWith(exitBadInput, err)
	case errors.Is(err, records.ErrUnavailable) && rc.DatabaseURL != "":
		// The driver lists every address it tried, each with its dial
		// error: name the server once, and why, in words.
		return nil, exitWith(exitNotRun, &saidError{err: err,
			msg: fmt.Sprintf("PostgreSQL at %s did not answer: %s", postgresName(rc.DatabaseURL), records.Cause(err))})
	case err != nil:
		return nil, exitWith(exitNotRun, err)
	}
	return db, nil
}

// postgresName is a PostgreSQL URL as people name the server: its address
// and database, without the user's password.
func postgresName(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil || u.Host == "" {
		return "the --database-url address"
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		return u.Host + " (database " + db + ")"
	}
	return u.Host
}

// saidError is err with a message of its own for people; errors.Is and
// errors.As still see err.
type saidError struct {
	msg string
	err error
}

func (e *saidError) Error() string { return e.msg }

func (e *saidError) Unwrap() error { return e.err }

// names lists migrations as "0001_init, 0002_members".
func names(ms []records.Migration) string {
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += ", "
		}
		s += m.String()
	}
	return s
}
