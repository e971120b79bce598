package server

import (
	"bytes"
	"errors"
	"io"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// smtpSink is a real SMTP server (go-smtp) on 127.0.0.1:0 that keeps every
// message it receives in memory. With password set it offers AUTH PLAIN
// (without TLS, which go-smtp allows only when told) and records what
// passwords it was sent.
type smtpSink struct {
	addr     string
	password string

	mu    sync.Mutex
	msgs  []sinkMessage
	auths []string
	got   chan struct{}
}

// sinkMessage is one message as the sink received it.
type sinkMessage struct {
	from string
	to   []string
	data []byte
}

// startSMTP starts a sink for tb; it stops with the test.
func startSMTP(tb testing.TB, password string) *smtpSink {
	tb.Helper()
	sink := &smtpSink{password: password, got: make(chan struct{}, 1)}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{sink: sink}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.AllowInsecureAuth = password != ""
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	sink.addr = ln.Addr().String()
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return sink
}

// url is the sink's address as --smtp-url takes it.
func (s *smtpSink) url() string { return "smtp://" + s.addr }

// count is how many messages arrived.
func (s *smtpSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs)
}

// waitFor waits for the n-th message to address (counting from 1) and
// returns its decoded text.
func (s *smtpSink) waitFor(tb testing.TB, to string, n int) string {
	tb.Helper()
	deadline := time.After(15 * time.Second)
	for {
		s.mu.Lock()
		var seen []sinkMessage
		for _, m := range s.msgs {
			if len(m.to) == 1 && m.to[0] == to {
				seen = append(seen, m)
			}
		}
		s.mu.Unlock()
		if len(seen) >= n {
			return decodeMail(tb, seen[n-1].data)
		}
		select {
		case <-s.got:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			tb.Fatalf("no message %d to %s after 15 s (%d messages in all)", n, to, s.count())
		}
	}
}

// decodeMail is a message's headers and its body decoded.
func decodeMail(tb testing.TB, data []byte) string {
	tb.Helper()
	m, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("read message: %v\n%s", err, data)
	}
	var body io.Reader = m.Body
	if strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		tb.Fatalf("decode message: %v", err)
	}
	return "Subject: " + m.Header.Get("Subject") + "\nFrom: " + m.Header.Get("From") + "\n\n" + string(b)
}

// sinkSession is one SMTP session of the sink.
type sinkSession struct {
	sink *smtpSink
	msg  sinkMessage
}

var _ smtp.AuthSession = (*sinkSession)(nil)

func (s *sinkSession) AuthMechanisms() []string {
	if s.sink.password == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *sinkSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, _, password string) error {
		s.sink.mu.Lock()
		s.sink.auths = append(s.sink.auths, password)
		s.sink.mu.Unlock()
		return errors.New("refused")
	}), nil
}

func (s *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	s.msg = sinkMessage{from: from}
	return nil
}

func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.msg.to = append(s.msg.to, to)
	return nil
}

func (s *sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.msg.data = b
	s.sink.mu.Lock()
	s.sink.msgs = append(s.sink.msgs, s.msg)
	s.sink.mu.Unlock()
	select {
	case s.sink.got <- struct{}{}:
	default:
	}
	return nil
}

func (s *sinkSession) Reset()        { s.msg = sinkMessage{} }
func (s *sinkSession) Logout() error { return nil }
