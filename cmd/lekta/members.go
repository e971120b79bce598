package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"lekta.dev/lekta/records"
)

const membersUsage = `usage: lekta members add EMAIL [flags]
       lekta members invite EMAIL [--public-url URL] [--signin-link-ttl DUR] [flags]
       lekta members list [flags]
       lekta members revoke ID [flags]
       lekta members rotate-key ID [flags]

add         creates a member and prints their API key, alone on the first
            line of standard output. It is shown this once: only its hash
            is stored.
invite      prints a one-time sign-in link for the member, alone on the
            first line (adding the member when missing): absolute with
            --public-url, else a path to put the service's address in
            front of. It works once, for --signin-link-ttl (30m), while
            serve runs with --members invite or open; only its hash is
            stored.
list        lists the members: id, email, created, revoked.
revoke      stops the member's key at once (their saved sites stop being
            re-audited, their sessions end).
rotate-key  gives the member a new key, printed alone on the first line;
            the old one stops working at once.
Exit status: 0 done, 2 bad arguments or flags, 1 no such member (or the
email is taken, or invite's member was revoked), 3 the database cannot
answer.
Flags: --data-dir, --database-url (as serve's).
`

// runMembers is "lekta members add|invite|list|revoke|rotate-key".
func runMembers(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, membersUsage)
		return exitWith(exitBadInput, nil)
	}
	cmd, rest := args[0], args[1:]
	if cmd == "-h" || cmd == "-help" || cmd == "--help" || cmd == "help" {
		fmt.Fprint(stdout, membersUsage)
		return nil
	}
	want := map[string]int{"add": 1, "invite": 1, "list": 0, "revoke": 1, "rotate-key": 1}
	n, ok := want[cmd]
	if !ok {
		fmt.Fprint(stderr, membersUsage)
		return exitWith(exitBadInput, fmt.Errorf("members: unknown command %q", cmd))
	}
	// The argument may come before or after the flags.
	var pos []string
	for len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	var d databaseFlags
	fs := newFlagSet("members "+cmd, membersUsage, stderr)
	d.register(fs)
	var inv inviteFlags
	if cmd == "invite" {
		inv.register(fs)
	}
	if err := parseFlags(fs, rest, getenv); err != nil {
		return exitWith(exitBadInput, flagError(err))
	}
	if cmd == "invite" {
		if err := inv.check(); err != nil {
			return exitWith(exitBadInput, err)
		}
	}
	pos = append(pos, fs.Args()...)
	if len(pos) != n {
		return exitWith(exitBadInput, usageError(fs, fmt.Errorf("members %s takes %d argument(s), got %d", cmd, n, len(pos))))
	}
	if d.databaseURL != "" {
		if err := records.CheckURL(d.databaseURL); err != nil {
			return exitWith(exitBadInput, err)
		}
	}
	db, err := d.openRecords(ctx, getenv)
	if err != nil {
		return exitWith(exitFor(err), err)
	}
	defer db.Close()
	if cmd == "invite" {
		return inviteMember(ctx, db, pos[0], inv, stdout, stderr)
	}
	return membersCommand(ctx, db, cmd, pos, stdout)
}

func membersCommand(ctx context.Context, db *records.DB, cmd string, pos []string, stdout io.Writer) error {
	switch cmd {
	case "add":
		m, key, err := db.AddMember(ctx, pos[0], time.Now())
		if err != nil {
			return memberError(err)
		}
		fmt.Fprintln(stdout, key)
		fmt.Fprintf(stdout, "member %s (%s) added; the key above is shown only now: give it to them, it is stored only as a hash\n", m.ID, safe(m.Email))
	case "list":
		ms, err := db.Members(ctx)
		if err != nil {
			return memberError(err)
		}
		for _, m := range ms {
			state := "active"
			if m.Revoked() {
				state = "revoked " + m.RevokedAt.Format(time.RFC3339)
			}
			// Addresses stored before add checked them may hold anything.
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", safe(m.ID), safe(m.Email), m.CreatedAt.Format(time.RFC3339), state)
		}
	case "revoke":
		if err := db.RevokeMember(ctx, pos[0], time.Now()); err != nil {
			return memberError(err)
		}
		fmt.Fprintf(stdout, "member %s revoked: their key no longer works\n", pos[0])
	case "rotate-key":
		key, err := db.RotateKey(ctx, pos[0])
		if err != nil {
			return memberError(err)
		}
		fmt.Fprintln(stdout, key)
		fmt.Fprintf(stdout, "member %s has a new key (above, shown only now); the old one no longer works\n", pos[0])
	}
	return nil
}

// memberError gives a members error its exit status.
func memberError(err error) error {
	switch {
	case errors.Is(err, records.ErrUnavailable):
		return exitWith(exitNotRun, err)
	case errors.Is(err, records.ErrNotFound):
		return exitWith(exitFailure, fmt.Errorf("%w: no member has this id (see lekta members list)", err))
	case errors.Is(err, records.ErrExists), errors.Is(err, records.ErrRevoked):
		return exitWith(exitFailure, err)
	}
	return exitWith(exitBadInput, err)
}
