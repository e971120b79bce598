package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBuffer is a log destination that tests read while the server writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestJoinSMTPPassword: the SMTP password is in no error and no log line,
// and is never sent to a server that offers no TLS: the mailer then
// refuses to authenticate with PLAIN rather than send it in the clear.
func TestJoinSMTPPassword(t *testing.T) {
	const secret = "s3cret-pw"
	for _, u := range []string{"smtp://user:" + secret + "@127.0.0.1:99999", "ftp://user:" + secret + "@127.0.0.1",
		"smtp://user:" + secret + "@127.0.0.1:port", "smtp://user:" + secret + "@127.0.0.1/path"} {
		_, err := NewSMTPMailer(u, "lekta@example.com")
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("NewSMTPMailer(%q) = %v: want an error without the password", u, err)
		}
		t.Logf("refused: %v", err)
	}
	if _, err := NewSMTPMailer("smtp://127.0.0.1", "Lekta <lekta@example.com>\r\nBcc: x@example.com"); err == nil {
		t.Error("a sender with a line break was accepted")
	}

	sink := startSMTP(t, "the sink's own")
	m, err := NewSMTPMailer("smtp://user:"+secret+"@"+sink.addr, "lekta@example.com")
	if err != nil || strings.Contains(m.String(), secret) {
		t.Fatalf("NewSMTPMailer = %v, %v; want no password in its name", m, err)
	}
	err = m.Send(context.Background(), "ana@example.com", "hello", "body")
	sink.mu.Lock()
	auths := len(sink.auths)
	sink.mu.Unlock()
	t.Logf("sending: %v", err)
	if err == nil || strings.Contains(err.Error(), secret) || auths != 0 || sink.count() != 0 {
		t.Fatalf("sending through a server without TLS that asks for PLAIN: %v, %d passwords sent; want an error without the password and none sent", err, auths)
	}

	logs := &logBuffer{}
	h := newMemberHarness(t, memberOpts{config: func(c *Config) {
		c.Joining, c.PublicURL, c.Mailer = JoinOpen, joinPublicURL, m
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}})
	if resp, b := askByAPI(h, "new@example.com"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ask: %d %s, want 202 (the mail fails later, in the background)", resp.StatusCode, b)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(logs.String(), "sign-in link not sent") {
		if time.Now().After(deadline) {
			t.Fatalf("no log line of the failed mail after 15 s:\n%s", logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s := logs.String(); strings.Contains(s, secret) || strings.Contains(s, "token") || !strings.Contains(s, "member=m_") {
		t.Fatalf("the log of the failed mail holds the password or a token, or does not name the member:\n%s", s)
	}
}
