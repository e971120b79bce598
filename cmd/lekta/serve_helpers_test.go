package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
)

// serveNeeds fails under CI, and skips otherwise, when a program a serve
// test needs is missing; it returns the program's path.
func serveNeeds(tb testing.TB, names ...string) string {
	tb.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		tb.Fatalf("none of %v is installed; CI must provide it (make test installs it)", names)
	}
	tb.Skipf("none of %v is installed; install it or run make test", names)
	return ""
}

// serveBuf is a bytes.Buffer safe for the server's and the test's goroutines.
type serveBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *serveBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *serveBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// served is one "lekta serve" run started through run() on 127.0.0.1:0.
type served struct {
	tb     testing.TB
	base   string
	stdout *serveBuf
	stderr *serveBuf
	cancel context.CancelFunc
	done   chan error
	client *http.Client
	proc   *os.Process // set when lekta serve runs as a process of its own

	stopOnce sync.Once
	stopErr  error
}

// startServe runs "lekta serve" with the test site's hosts mapped by
// --resolve, plus extra flags (a data dir of the test's own unless they
// name one), and waits until /healthz answers.
func startServe(tb testing.TB, site *testsite.Site, hosts []string, extra ...string) *served {
	tb.Helper()
	serveNeeds(tb, "chromium", "chromium-browser", "google-chrome")
	resolve, allow := site.ResolveFlags(hosts...)
	args := []string{"serve", "--addr", "127.0.0.1:0", "--allow-addr", allow, "--client-rate", "100000/1m", "--timeout", "30s"}
	for _, r := range resolve {
		args = append(args, "--resolve", r)
	}
	if !slices.Contains(extra, "--data-dir") {
		args = append(args, "--data-dir", tb.TempDir())
	}
	args = append(args, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{tb: tb, stdout: &serveBuf{}, stderr: &serveBuf{}, cancel: cancel, done: make(chan error, 1),
		client: &http.Client{Timeout: 90 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	go func() { s.done <- run(ctx, args, func(string) string { return "" }, s.stdout, s.stderr) }()
	tb.Cleanup(func() {
		if err := s.stop(); err != nil {
			tb.Errorf("lekta serve returned %v\nstderr:\n%s", err, s.stderr)
		}
	})
	s.waitServing(tb)
	return s
}

// waitServing waits until lekta serve printed its address and /healthz
// answers 200.
func (s *served) waitServing(tb testing.TB) {
	tb.Helper()
	const prefix = "lekta: serving on "
	deadline := time.Now().Add(60 * time.Second)
	for s.base == "" {
		if out := s.stdout.String(); strings.Contains(out, prefix) {
			line, _, _ := strings.Cut(out[strings.Index(out, prefix)+len(prefix):], "\n")
			s.base = strings.TrimSpace(line)
			break
		}
		select {
		case err := <-s.done:
			s.done <- err
			tb.Fatalf("lekta serve exited before serving: %v\nstderr:\n%s", err, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("lekta serve printed no address\nstderr:\n%s", s.stderr)
		}
	}
	for {
		resp, err := s.client.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("/healthz never answered 200: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop cancels run's context (as SIGTERM does) and returns what run returned.
func (s *served) stop() error {
	s.stopOnce.Do(func() {
		s.cancel()
		select {
		case s.stopErr = <-s.done:
		case <-time.After(2 * time.Minute):
			s.stopErr = context.DeadlineExceeded
		}
		s.client.CloseIdleConnections()
	})
	return s.stopErr
}

// do sends one request and returns the response with its body read.
func (s *served) do(method, path, body string, hdr map[string]string) (*http.Response, []byte) {
	s.tb.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		s.tb.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.tb.Fatal(err)
	}
	return resp, b
}

// postAPI submits u through the JSON API.
func (s *served) postAPI(u string) (*http.Response, []byte) {
	s.tb.Helper()
	b, _ := json.Marshal(map[string]string{"url": u})
	return s.do("POST", "/api/v1/audits", string(b), map[string]string{"Content-Type": "application/json"})
}

// postForm submits u through the form, as the form page itself would.
func (s *served) postForm(u string, hdr map[string]string) (*http.Response, []byte) {
	s.tb.Helper()
	all := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": s.base}
	for k, v := range hdr {
		all[k] = v
	}
	return s.do("POST", "/audits", url.Values{"url": {u}}.Encode(), all)
}

// waitReport long-polls the API until the audit id has its report.
func (s *served) waitReport(id string) *audit.Report {
	s.tb.Helper()
	return s.waitReportFor(id, 90*time.Second)
}

// waitReportFor is waitReport with a deadline of its own.
func (s *served) waitReportFor(id string, within time.Duration) *audit.Report {
	s.tb.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, b := s.do("GET", "/api/v1/audits/"+id+"?wait=30s", "", nil)
		switch resp.StatusCode {
		case http.StatusOK:
			var r audit.Report
			if err := json.Unmarshal(b, &r); err != nil {
				s.tb.Fatalf("report %s: %v", id, err)
			}
			return &r
		case http.StatusAccepted:
		default:
			s.tb.Fatalf("GET audit %s: %d %s", id, resp.StatusCode, b)
		}
	}
	s.tb.Fatalf("audit %s did not finish", id)
	return nil
}

// servePendingID reads the id of a 202 answer.
func servePendingID(tb testing.TB, resp *http.Response, b []byte) string {
	tb.Helper()
	if resp.StatusCode != http.StatusAccepted {
		tb.Fatalf("status %d, want 202: %s", resp.StatusCode, b)
	}
	var p struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.ID == "" {
		tb.Fatalf("202 body %s: %v", b, err)
	}
	return p.ID
}

// serveErrorCode reads the code of an error answer and checks Retry-After.
func serveErrorCode(tb testing.TB, resp *http.Response, b []byte, status int, retry bool) string {
	tb.Helper()
	if resp.StatusCode != status {
		tb.Fatalf("status %d, want %d: %s", resp.StatusCode, status, b)
	}
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		tb.Fatalf("error body %s: %v", b, err)
	}
	if got := resp.Header.Get("Retry-After"); retry && got == "" {
		tb.Errorf("%d %s without Retry-After", status, e.Error.Code)
	} else if !retry && got != "" {
		tb.Errorf("%d %s with Retry-After %q", status, e.Error.Code, got)
	}
	return e.Error.Code
}

// secretsKey is the key file every serve of the test binary that uses
// PostgreSQL shares, as the instances of one deployment do.
var secretsKey struct {
	once sync.Once
	path string
}

// sharedSecretsKey is the path of secretsKey, made by the first caller as
// an operator makes a deployment's key (serve never makes a named one).
func sharedSecretsKey(tb testing.TB) string {
	tb.Helper()
	secretsKey.once.Do(func() {
		dir, err := os.MkdirTemp("", "lekta-secrets-")
		if err != nil {
			tb.Fatal(err)
		}
		path := filepath.Join(dir, "secrets.key")
		if err := records.MakeSecretsKey(path); err != nil {
			tb.Fatal(err)
		}
		secretsKey.path = path
	})
	if secretsKey.path == "" {
		tb.Fatal("the shared secrets key could not be made (see the first test that asked for it)")
	}
	return secretsKey.path
}

// serveErrorMessage reads the message of an error answer.
func serveErrorMessage(tb testing.TB, b []byte) string {
	tb.Helper()
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		tb.Fatalf("error body %s: %v", b, err)
	}
	return e.Error.Message
}
