// Command lekta audits web pages the way a plain fetcher and a browser see
// them. Subcommands: audit, serve, robots, db, records, members.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"lekta.dev/lekta/compare"
)

// Exit statuses of the CLI.
const (
	exitOK       = 0
	exitFailure  = 1 // a negative answer (robots check: disallowed; robots lint: errors)
	exitBadInput = 2 // malformed URL, refused target, bad flags
	exitNotRun   = 3 // the audit could not run (skipped, rate-limited, browser missing, timeout)
	// exitFindings (4, gate.go): the audit ran and has a finding at or above --fail-on.
)

// exitError carries an exit status with its message ("" prints nothing).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitWith wraps err (may be nil) with an exit status.
func exitWith(code int, err error) error { return &exitError{code: code, err: err} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err (when it has a message) and returns the exit status.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errHelpShown) {
		return exitOK
	}
	code := exitBadInput
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	fmt.Fprintln(stderr, "lekta:", compare.Sentence(err.Error()))
	return code
}

const usage = `usage: lekta <command> [flags]

commands:
  audit URL         audit one page in both lanes and print the report
  serve             run the web service (form, API, /bot)
  robots check FILE AGENT URL
                    say whether AGENT may fetch URL under robots.txt FILE
  robots lint FILE  list the issues of robots.txt FILE per line
  records --host HOST [--since 1h] [--json]
                    the requests audits sent to HOST (for answering a site operator)
  records verify LOGLINE
                    say whether an access-log line is a request LektaBot made
  db status         the records database and its schema version
  db migrate        apply the schema migrations this binary knows
  members add EMAIL | invite EMAIL | list | revoke ID | rotate-key ID
                    manage members (the API key or sign-in link is printed once)

Run "lekta <command> -h" for a command's flags.
`

// run is the whole program; main only calls it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitWith(exitBadInput, nil)
	}
	switch args[0] {
	case "audit":
		return runAudit(ctx, args[1:], getenv, stdout, stderr)
	case "serve":
		return runServe(ctx, args[1:], getenv, stdout, stderr)
	case "robots":
		return runRobots(ctx, args[1:], stdout, stderr)
	case "db":
		return runDB(ctx, args[1:], getenv, stdout, stderr)
	case "records":
		return runRecords(ctx, args[1:], getenv, stdout, stderr)
	case "members":
		return runMembers(ctx, args[1:], getenv, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return exitWith(exitBadInput, fmt.Errorf("unknown command %q", args[0]))
	}
}
