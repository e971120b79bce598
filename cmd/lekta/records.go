package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/escape"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/verify"
)

const recordsUsage = `usage: lekta records --host HOST [--since 1h] [--json] [flags]
       lekta records verify [flags] LOGLINE
       lekta records verify --time T --client IP --method M --path P [--user-agent UA] --host HOST [flags]

lekta records lists the requests this machine's (or, with --database-url,
the deployment's) audits sent to HOST since the given time: time, lane,
method, URL (the query only as a hash), status, bytes, our source address
and the site's address, and the audit id. It is for the operator of this
instance answering a site operator's question.

lekta records verify says whether a line of a site's access log (common or
combined log format, optionally led by the virtual host; --host names the
site when it is not) is a request LektaBot made, with the matcher of
/bot/verify: the same host, method, path and query, from our source address
(or an --egress-addr), within 5 seconds.

exit status: 0 listed / the line is ours, 1 the line is not ours, 2 bad
flags or an unreadable line (the message names the part), 3 the database
cannot answer, or records are off.
`

// runRecords is "lekta records" and "lekta records verify".
func runRecords(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "verify" {
		return runRecordsVerify(ctx, args[1:], getenv, stdout, stderr)
	}
	var d databaseFlags
	var rf recordsFlags
	fs := newFlagSet("records", recordsUsage, stderr)
	d.register(fs)
	rf.register(fs)
	host := fs.String("host", "", "the site's host name (required)")
	since := fs.Duration("since", time.Hour, "list the requests sent in this long before now")
	asJSON := fs.Bool("json", false, "print the records as a JSON array")
	if err := parseFlags(fs, args, getenv); err != nil {
		return exitWith(exitBadInput, flagError(err))
	}
	if fs.NArg() != 0 {
		return exitWith(exitBadInput, usageError(fs, fmt.Errorf("records takes no arguments, got %q (did you mean records verify?)", fs.Args())))
	}
	h, err := hostFlag(*host)
	if err != nil {
		return exitWith(exitBadInput, err)
	}
	if *since <= 0 {
		return exitWith(exitBadInput, fmt.Errorf("--since %s: must be positive", *since))
	}
	db, err := d.openRecords(ctx, getenv)
	if err != nil {
		return exitWith(exitFor(err), err)
	}
	defer db.Close()
	now := time.Now()
	rs, err := db.QueryRequests(ctx, h, now.Add(-*since), now, 0)
	if err != nil {
		return exitWith(exitNotRun, err)
	}
	if *asJSON {
		if rs == nil {
			rs = []records.Request{}
		}
		b, err := escape.JSON(rs, "  ")
		if err != nil {
			return exitWith(exitNotRun, err)
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	return writeRecords(stdout, h, *since, rf.requestTTL, rs)
}

// hostFlag checks --host: a host name, lower-cased, without port.
func hostFlag(h string) (string, error) {
	if strings.TrimSpace(h) == "" {
		return "", errors.New("--host is required: the site's host name, such as example.com")
	}
	c, err := verify.ParseFields(verify.Fields{Time: "2000-01-01T00:00:00Z", Client: "192.0.2.1", Method: "GET", Path: "/", Host: h})
	if err != nil {
		return "", fmt.Errorf("--host: %w", err)
	}
	return c.Host, nil
}

// writeRecords prints the records as text, one line each.
func writeRecords(w io.Writer, host string, since, ttl time.Duration, rs []records.Request) error {
	if ttl == 0 {
		fmt.Fprintln(w, "Request records are off (--request-records-ttl 0); none are kept.")
	}
	if len(rs) == 0 {
		_, err := fmt.Fprintf(w, "No requests to %s in the last %s.\n", host, compare.Duration(since))
		return err
	}
	fmt.Fprintf(w, "%d requests to %s in the last %s (times UTC; the query is shown only as its hash):\n", len(rs), host, compare.Duration(since))
	for _, r := range rs {
		status := strconv.Itoa(r.Status)
		if r.Status == 0 {
			status = r.ErrorClass
		}
		target := r.Path
		if r.QueryHash != "" {
			target += "?#" + r.QueryHash[:12]
		}
		if _, err := fmt.Fprintf(w, "%s  %-6s %-4s %s://%s:%d%s  %s  %d B  from %s to %s  audit %s\n",
			r.At.UTC().Format("2006-01-02 15:04:05.000"), r.Lane, safe(r.Method), safe(r.Scheme), safe(r.Host), r.Port, safe(target),
			status, r.Bytes, r.Local, r.Remote, safe(r.AuditID)); err != nil {
			return err
		}
	}
	return nil
}

// safe quotes s with Go escapes when it holds anything but printable ASCII,
// so a stored value never reaches the terminal as a control sequence.
func safe(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return strconv.Quote(s)
		}
	}
	return s
}

// runRecordsVerify is "lekta records verify".
func runRecordsVerify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var d databaseFlags
	var rf recordsFlags
	var f verify.Fields
	fs := newFlagSet("records verify", recordsUsage, stderr)
	d.register(fs)
	rf.register(fs)
	fs.StringVar(&f.Host, "host", "", "the site's host name, when the line does not lead with it")
	fs.StringVar(&f.Time, "time", "", "instead of a line: the request's time with its offset (2026-12-01T12:03:41Z)")
	fs.StringVar(&f.Client, "client", "", "instead of a line: the address the request came from")
	fs.StringVar(&f.Method, "method", "", "instead of a line: the request method")
	fs.StringVar(&f.Path, "path", "", "instead of a line: the path, with the query as sent")
	fs.StringVar(&f.UserAgent, "user-agent", "", "instead of a line: the User-Agent (optional)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return exitWith(exitBadInput, flagError(err))
	}
	var claim verify.Claim
	var err error
	switch {
	case fs.NArg() > 1:
		return exitWith(exitBadInput, errors.New("records verify takes one log line: quote it"))
	case fs.NArg() == 1:
		if f.Time != "" || f.Client != "" || f.Method != "" || f.Path != "" || f.UserAgent != "" {
			return exitWith(exitBadInput, errors.New("records verify takes a log line or --time, --client, --method and --path, not both"))
		}
		claim, err = verify.ParseLine(fs.Arg(0), f.Host)
	default:
		claim, err = verify.ParseFields(f)
	}
	if err != nil {
		return exitWith(exitBadInput, err)
	}
	vc, err := rf.verifyConfig(rf.identity())
	if err != nil {
		return exitWith(exitBadInput, err)
	}
	if rf.requestTTL == 0 {
		return exitWith(exitNotRun, errNoRecords)
	}
	db, err := d.openRecords(ctx, getenv)
	if err != nil {
		return exitWith(exitFor(err), err)
	}
	defer db.Close()
	a, err := verify.New(db, vc).Verify(ctx, claim)
	if err != nil {
		return exitWith(exitNotRun, err)
	}
	fmt.Fprintln(stdout, a.Sentence())
	if !a.Match {
		if !publicAddrKnown(vc.Egress) {
			fmt.Fprintln(stderr, "lekta: note: this machine does not know the public address its requests leave from (its own is private and no --egress-addr was given), so a line from that public address cannot match on its source.")
		}
		return exitWith(exitFailure, nil)
	}
	return nil
}
