package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"lekta.dev/lekta/server"
)

// maxLinkTTL is the longest a sign-in link may work.
const maxLinkTTL = 7 * 24 * time.Hour

// joinFlags are serve's flags of joining: how people become members, and
// how the service mails their sign-in links.
type joinFlags struct {
	members  string
	smtpURL  string
	mailFrom string
	linkTTL  time.Duration

	// joining and mailer are the flags read by check.
	joining server.Joining
	mailer  server.Mailer
}

func (f *joinFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.members, "members", string(server.JoinClosed), "how people become members: closed (the operator adds them and hands out keys), "+
		"invite (also one-time sign-in links from lekta members invite) or open (anyone may ask for a sign-in link by e-mail; needs --smtp-url, --mail-from and --public-url)")
	fs.StringVar(&f.smtpURL, "smtp-url", "", "SMTP server that sends the sign-in links of --members open: smtp://user:password@host:port (STARTTLS when offered, port 587 by default) "+
		"or smtps://… (TLS from the start, port 465 by default); the password is never shown")
	fs.StringVar(&f.mailFrom, "mail-from", "", "sender of the sign-in links of --members open: lekta@example.com or \"Lekta <lekta@example.com>\"")
	registerLinkTTL(fs, &f.linkTTL)
}

// registerLinkTTL adds --signin-link-ttl, which serve and members invite share.
func registerLinkTTL(fs *flag.FlagSet, ttl *time.Duration) {
	fs.DurationVar(ttl, "signin-link-ttl", server.DefaultSignInLinkTTL, "how long a sign-in link works (it works once); at most 168h")
}

// checkLinkTTL checks --signin-link-ttl.
func checkLinkTTL(ttl time.Duration) error {
	if ttl < time.Minute || ttl > maxLinkTTL {
		return fmt.Errorf("--signin-link-ttl %s: must be between 1m and 168h (7 days)", ttl)
	}
	return nil
}

// check reads the flags; errors name the flag and never repeat the SMTP
// password. publicURL is --public-url, already checked.
func (f *joinFlags) check(publicURL string) error {
	j, err := server.ParseJoining(f.members)
	if err != nil {
		return fmt.Errorf("--members %q: %w", f.members, err)
	}
	f.joining = j
	if err := checkLinkTTL(f.linkTTL); err != nil {
		return err
	}
	if j != server.JoinOpen {
		if f.smtpURL != "" || f.mailFrom != "" {
			return fmt.Errorf("--smtp-url and --mail-from are for --members open, which mails sign-in links; --members is %s", j)
		}
		return nil
	}
	switch {
	case f.smtpURL == "" || f.mailFrom == "":
		return errors.New("--members open needs --smtp-url and --mail-from: it e-mails sign-in links through that SMTP server, from that address")
	case publicURL == "":
		return errors.New("--members open needs --public-url: the sign-in links it e-mails must name this service's own address, which a request cannot be trusted to say")
	}
	m, err := server.NewSMTPMailer(f.smtpURL, f.mailFrom)
	switch {
	case errors.Is(err, server.ErrBadSender):
		return fmt.Errorf("--mail-from %w", err)
	case err != nil:
		return fmt.Errorf("--smtp-url %w", err)
	}
	f.mailer = m
	return nil
}
