package server

import (
	"context"
	"errors"
	"fmt"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wneessen/go-mail"

	"lekta.dev/lekta/records"
)

// Mailer sends the service's e-mails: the sign-in links of JoinOpen.
// *SMTPMailer is the one the service uses.
type Mailer interface {
	// Send sends a plain-text message to one address.
	Send(ctx context.Context, to, subject, body string) error
}

var _ Mailer = (*SMTPMailer)(nil)

// Errors of NewSMTPMailer, which say what was wrong in words.
var (
	// ErrBadSMTPURL: the SMTP server's URL cannot be used.
	ErrBadSMTPURL = errors.New("unusable SMTP URL")
	// ErrBadSender: the sender's address cannot be used.
	ErrBadSender = errors.New("unusable sender address")
)

// smtpTimeout bounds the dial and each command of a delivery.
const smtpTimeout = 30 * time.Second

// SMTPMailer sends through the operator's SMTP server with go-mail (the
// only package that speaks SMTP here). Its password never appears in its
// errors or in String.
type SMTPMailer struct {
	host     string
	port     int
	implicit bool // smtps://: TLS from the first byte
	user     string
	password string
	from     string
	// where is the server's URL with the password replaced, for messages.
	where string
}

// NewSMTPMailer checks an SMTP URL and a sender address. The URL is
// smtp://[user:password@]host[:port] (port 587 by default; STARTTLS when
// the server offers it, and a password is then only sent by a mechanism
// that does not reveal it on a connection without TLS) or smtps://…
// (port 465 by default; TLS from the start, certificate checked). from is
// an address, optionally with a name: "Lekta <lekta@example.com>". No
// error repeats the password.
func NewSMTPMailer(rawURL, from string) (*SMTPMailer, error) {
	m, err := parseSMTPURL(rawURL)
	if err != nil {
		return nil, err
	}
	addr, err := netmail.ParseAddress(from)
	if err != nil || strings.ContainsAny(from, "\r\n") {
		return nil, fmt.Errorf("%q: %w: want an address such as lekta@example.com or \"Lekta <lekta@example.com>\"", from, ErrBadSender)
	}
	if err := records.CheckEmail(addr.Address); err != nil {
		return nil, fmt.Errorf("%q: %w: %w", from, ErrBadSender, err)
	}
	m.from = addr.String()
	return m, nil
}

// parseSMTPURL reads the URL of NewSMTPMailer.
func parseSMTPURL(rawURL string) (*SMTPMailer, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url's own message repeats the URL, password included.
		return nil, fmt.Errorf("%w: not a URL: want smtp://user:password@host:port or smtps://user:password@host:port", ErrBadSMTPURL)
	}
	m := &SMTPMailer{host: u.Hostname(), where: u.Redacted()}
	switch u.Scheme {
	case "smtp":
		m.port = 587
	case "smtps":
		m.port, m.implicit = 465, true
	default:
		return nil, fmt.Errorf("%s: %w: the scheme must be smtp (STARTTLS when offered) or smtps (TLS from the start)", m.where, ErrBadSMTPURL)
	}
	switch {
	case m.host == "":
		return nil, fmt.Errorf("%s: %w: no host", m.where, ErrBadSMTPURL)
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "", u.Opaque != "":
		return nil, fmt.Errorf("%s: %w: only the user, password, host and port may be given", m.where, ErrBadSMTPURL)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%s: %w: the port must be a number from 1 to 65535", m.where, ErrBadSMTPURL)
		}
		m.port = n
	}
	if u.User != nil {
		m.user = u.User.Username()
		m.password, _ = u.User.Password()
	}
	return m, nil
}

// String is the server's URL without its password.
func (m *SMTPMailer) String() string { return m.where }

// Send delivers one plain-text message.
func (m *SMTPMailer) Send(ctx context.Context, to, subject, body string) error {
	msg := mail.NewMsg()
	if err := msg.From(m.from); err != nil {
		return m.failed(err)
	}
	if err := msg.To(to); err != nil {
		return m.failed(err)
	}
	msg.Subject(subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(mail.TypeTextPlain, body)
	c, err := mail.NewClient(m.host, m.options()...)
	if err != nil {
		return m.failed(err)
	}
	return m.failed(c.DialAndSendWithContext(ctx, msg))
}

// options are go-mail's client options for this server.
func (m *SMTPMailer) options() []mail.Option {
	opts := []mail.Option{mail.WithPort(m.port), mail.WithTimeout(smtpTimeout)}
	if m.implicit {
		opts = append(opts, mail.WithSSL())
	} else {
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	}
	if m.user != "" {
		// Auto-discovery picks PLAIN or LOGIN only on a TLS connection.
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover),
			mail.WithUsername(m.user), mail.WithPassword(m.password))
	}
	return opts
}

// failed wraps a delivery error, the password taken out of its words.
func (m *SMTPMailer) failed(err error) error {
	if err == nil {
		return nil
	}
	// The message only: the error itself may print the password.
	return fmt.Errorf("send mail through %s: %s", m.where, records.Scrub(err, m.password).Error())
}
