package redistest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Private is a redis-server of one test's own, on 127.0.0.1 at a port that
// was free when it started, with no persistence (--save "" --appendonly
// no) and its files in a temporary directory. A test may kill, pause and
// restart it without touching the shared Redis; each start begins empty.
// Its methods are for the test's goroutine.
type Private struct {
	bin   string
	port  int
	dir   string
	extra []string
	cmd   *exec.Cmd     // nil while the server is not running
	admin *redis.Client // for Pause and Unpause
}

// StartPrivate starts a private redis-server with extra appended to its
// arguments (for example "--cluster-enabled", "yes") and waits until it
// answers PING; it is killed when the test ends. Without redis-server
// installed the test fails under CI and is skipped otherwise.
func StartPrivate(tb testing.TB, extra ...string) *Private {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		missing(tb, "redis-server is not installed: %v (make test installs it)", err)
	}
	p := &Private{bin: bin, port: FreePort(tb), dir: tb.TempDir(), extra: extra}
	// UNPAUSE waits for a PAUSE ALL to end, so reads get time.
	p.admin = redis.NewClient(&redis.Options{Addr: p.Addr(), ReadTimeout: 10 * time.Second})
	tb.Cleanup(func() { _ = p.admin.Close() })
	p.Start(tb)
	tb.Cleanup(p.Kill)
	return p
}

// Addr is the server's host:port.
func (p *Private) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

// URL is the server's redis:// URL, database 0.
func (p *Private) URL() string { return "redis://" + p.Addr() }

// Client returns a new raw client to the server, closed when the test ends.
// Its read timeout outlasts a short CLIENT PAUSE.
func (p *Private) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), ReadTimeout: 10 * time.Second})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Start runs the server on its port, as after a Kill or Stop, and waits
// until it answers PING. It starts empty.
func (p *Private) Start(tb testing.TB) {
	tb.Helper()
	if p.cmd != nil {
		tb.Fatalf("private redis-server on %s is already running", p.Addr())
	}
	log := filepath.Join(p.dir, "redis.log")
	args := append([]string{
		"--port", strconv.Itoa(p.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", p.dir, "--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning",
		"--logfile", log,
	}, p.extra...)
	cmd := exec.Command(p.bin, args...)
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	p.cmd = cmd
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			tb.Fatalf("private redis-server on %s did not answer: %v\n%s", p.Addr(), err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill ends the server with SIGKILL, as a crash would, and waits for it to
// exit. It does nothing when the server is not running.
func (p *Private) Kill() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}

// Stop shuts the server down with SIGTERM, as an operator would, and waits
// for it to exit; after 10 seconds it kills it and fails the test. It does
// nothing when the server is not running.
func (p *Private) Stop(tb testing.TB) {
	tb.Helper()
	if p.cmd == nil {
		return
	}
	cmd := p.cmd
	p.cmd = nil
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		tb.Errorf("signal redis-server on %s: %v", p.Addr(), err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		tb.Errorf("redis-server on %s did not exit within 10s of SIGTERM; killed it", p.Addr())
	}
}

// Pause stalls every client of the server for d with CLIENT PAUSE ... ALL.
// Under it even Unpause waits for the pause to end, so keep d short (a few
// seconds).
func (p *Private) Pause(tb testing.TB, d time.Duration) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.admin.Do(ctx, "CLIENT", "PAUSE", strconv.FormatInt(d.Milliseconds(), 10), "ALL").Err(); err != nil {
		tb.Fatalf("client pause: %v", err)
	}
}

// Unpause ends a Pause with CLIENT UNPAUSE; after a PAUSE ALL it returns
// only once the pause has run out.
func (p *Private) Unpause(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.admin.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
		tb.Fatalf("client unpause: %v", err)
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Freeze stops the server with SIGSTOP: it holds every connection and
// answers nothing, as a stalled Redis does, until Thaw.
func (p *Private) Freeze(tb testing.TB) {
	tb.Helper()
	if p.cmd == nil {
		tb.Fatalf("private redis-server on %s is not running", p.Addr())
	}
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatalf("freeze redis-server: %v", err)
	}
}

// Thaw resumes a frozen server with SIGCONT.
func (p *Private) Thaw(tb testing.TB) {
	tb.Helper()
	if p.cmd == nil {
		tb.Fatalf("private redis-server on %s is not running", p.Addr())
	}
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		tb.Fatalf("thaw redis-server: %v", err)
	}
}
