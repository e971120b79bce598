package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/server"
)

// inviteFlags are the flags of lekta members invite.
type inviteFlags struct {
	publicURL string
	linkTTL   time.Duration
}

func (f *inviteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.publicURL, "public-url", "", "the service's address (as serve's --public-url): the link printed is then absolute, else a path")
	registerLinkTTL(fs, &f.linkTTL)
}

// check checks the flags, --public-url made canonical.
func (f *inviteFlags) check() error {
	if f.publicURL != "" {
		u, err := server.ParsePublicURL(f.publicURL)
		if err != nil {
			return fmt.Errorf("--public-url %q: %w", f.publicURL, err)
		}
		f.publicURL = u
	}
	return checkLinkTTL(f.linkTTL)
}

// inviteMember is "lekta members invite EMAIL": the member (added when
// missing) and a one-time sign-in link printed alone on the first line.
// Without --public-url the link is a path, and stderr says so.
func inviteMember(ctx context.Context, db *records.DB, email string, f inviteFlags, stdout, stderr io.Writer) error {
	now := time.Now()
	m, added, err := db.JoinMember(ctx, email, now)
	if err != nil {
		return memberError(err)
	}
	if m.Revoked() {
		return exitWith(exitFailure, fmt.Errorf("member %s (%s) was revoked: %w; add them again with another address", m.ID, safe(m.Email), records.ErrRevoked))
	}
	token, err := db.NewSignInLink(ctx, m.ID, now, f.linkTTL)
	if err != nil {
		return memberError(err)
	}
	fmt.Fprintln(stdout, server.PublicLink(f.publicURL, server.SignInLinkPath(token)))
	what := "invited"
	if added {
		what = "added and invited"
	}
	fmt.Fprintf(stdout, "member %s (%s) %s: the link above signs them in once, within %s; send it to them (it is stored only as a hash)\n",
		m.ID, safe(m.Email), what, compare.Span(f.linkTTL))
	if f.publicURL == "" {
		fmt.Fprintln(stderr, "lekta: note: the link is a path: put the service's address in front of it (https://audit.example.com/members/link?token=…), or give --public-url")
	}
	fmt.Fprintln(stderr, "lekta: note: the link works when serve runs with --members invite or --members open")
	return nil
}
