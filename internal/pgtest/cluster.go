// Package pgtest gives tests real PostgreSQL without touching the system's
// cluster: a throw-away cluster made with initdb and run with pg_ctl in a
// temporary directory on a free port of 127.0.0.1, shared by the tests of
// one package (start it with Main from TestMain), each test with a database
// of its own; and private clusters a test may stop and start. Only tests
// import it.
//
// The clusters require a password over TCP (scram-sha-256), so the URLs
// tests get carry one, as production URLs do. When the test process runs as
// root, initdb and the server run as the user postgres (or nobody), since
// PostgreSQL refuses to run as root. A watchdog stops a cluster whose test
// process died without stopping it.
//
// A test that needs PostgreSQL fails when the environment variable CI is
// set and initdb is missing, and skips with a message saying so otherwise.
package pgtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// superuser is the cluster's only role.
const superuser = "lekta"

// Cluster is one running throw-away PostgreSQL cluster.
type Cluster struct {
	bin      string // directory of initdb, pg_ctl and psql
	dir      string // everything: data, socket, log, password file
	port     int
	password string
	cred     *syscall.Credential // nil when not root

	mu      sync.Mutex
	running bool
}

// Missing says why PostgreSQL cannot be had here, or "" when it can.
func Missing() string {
	if _, err := binDir(); err != nil {
		return err.Error()
	}
	return ""
}

// binDir finds the directory holding initdb and pg_ctl: on PATH, else the
// newest /usr/lib/postgresql/*/bin (where Debian puts them).
func binDir() (string, error) {
	// initdb on PATH may be a link into the real directory (which has psql).
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			d := filepath.Dir(real)
			if isFile(filepath.Join(d, "pg_ctl")) && isFile(filepath.Join(d, "psql")) {
				return d, nil
			}
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "pg_ctl")) && isFile(filepath.Join(d, "psql")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL is not installed: no initdb and pg_ctl on PATH or under /usr/lib/postgresql/*/bin (make test installs the Debian package postgresql)")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// newCluster makes a data directory with initdb and starts the server.
func newCluster() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, password: randomHex(12)}
	if os.Geteuid() == 0 {
		if c.cred, err = unprivileged(); err != nil {
			return nil, err
		}
	}
	if c.dir, err = os.MkdirTemp("", "lekta-pgtest-"); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if err := c.own(c.dir); err != nil {
		c.remove()
		return nil, err
	}
	pwfile := filepath.Join(c.dir, "pw")
	if err := os.WriteFile(pwfile, []byte(c.password+"\n"), 0o600); err != nil {
		c.remove()
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if err := c.own(pwfile); err != nil {
		c.remove()
		return nil, err
	}
	if out, err := c.command("initdb", "-D", c.data(), "-U", superuser, "--pwfile", pwfile,
		"--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--locale=C",
		"--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		c.remove()
		return nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	if err := c.start(); err != nil {
		c.remove()
		return nil, err
	}
	c.watch()
	return c, nil
}

// unprivileged is the user PostgreSQL runs as when the test runs as root.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
		}
	}
	return nil, fmt.Errorf("pgtest: running as root and neither user postgres nor nobody exists to run PostgreSQL as")
}

// own gives path to the user PostgreSQL runs as.
func (c *Cluster) own(path string) error {
	if c.cred == nil {
		return nil
	}
	if err := os.Chown(path, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// command runs one of the cluster's programs as the cluster's user.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGPASSWORD="+c.password)
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// start runs pg_ctl start on a free port (the same one again after a Stop)
// and waits until the server accepts connections.
func (c *Cluster) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return nil
	}
	var last error
	for try := 0; try < 3; try++ {
		if c.port == 0 || try > 0 {
			p, err := freePort()
			if err != nil {
				return err
			}
			c.port = p
		}
		opts := strings.Join([]string{
			"-p", strconv.Itoa(c.port), "-k", c.dir, "-c", "listen_addresses=127.0.0.1",
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=300", "-c", "shared_buffers=32MB",
		}, " ")
		out, err := c.command("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "server.log"),
			"-o", opts, "-w", "-t", "60", "start").CombinedOutput()
		if err == nil {
			c.running = true
			return nil
		}
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		last = fmt.Errorf("pgtest: pg_ctl start on port %d: %v\n%s\n%s", c.port, err, out, tail(log))
	}
	return last
}

// stop runs pg_ctl stop (mode fast: connections are closed, nothing is lost).
func (c *Cluster) stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return nil
	}
	out, err := c.command("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "-t", "60", "stop").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %v\n%s", err, out)
	}
	c.running = false
	return nil
}

// remove stops the server if it runs and deletes the directory.
func (c *Cluster) remove() {
	_ = c.stop()
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// watch starts a watchdog process that stops the cluster and removes its
// directory once this process has exited, should it exit without doing so
// (a test binary killed at its timeout).
func (c *Cluster) watch() {
	script := fmt.Sprintf(`while [ -d /proc/%d ]; do sleep 1; done; "%s" -D "%s" -m immediate stop >/dev/null 2>&1; rm -rf "%s"`,
		os.Getpid(), filepath.Join(c.bin, "pg_ctl"), c.data(), c.dir)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	// No inherited stdout or stderr: go test would wait for them to close.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Start(); err == nil {
		go func() { _ = cmd.Wait() }()
	}
}

// URL is the postgres:// URL of database db on the cluster, password included.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", superuser, c.password, c.port, db)
}

// Port is the cluster's TCP port on 127.0.0.1.
func (c *Cluster) Port() int { return c.port }

// Password is the superuser's password, which every URL carries.
func (c *Cluster) Password() string { return c.password }

// psql runs one SQL command on database postgres as the superuser.
func (c *Cluster) psql(sql string) error {
	out, err := c.command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(c.port),
		"-U", superuser, "-d", "postgres", "-c", sql).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: psql %q: %v\n%s", sql, err, out)
	}
	return nil
}

// Database creates an empty database for the test, dropped when it ends,
// and returns its URL.
func (c *Cluster) Database(tb testing.TB) string {
	tb.Helper()
	name := "t_" + randomHex(8)
	if err := c.psql(`CREATE DATABASE "` + name + `"`); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		c.mu.Lock()
		running := c.running
		c.mu.Unlock()
		if running {
			if err := c.psql(`DROP DATABASE IF EXISTS "` + name + `" WITH (FORCE)`); err != nil {
				tb.Logf("cleanup: %v", err)
			}
		}
	})
	return c.URL(name)
}

// Stop shuts the server down, as an operator or a crash would take it away.
func (c *Cluster) Stop(tb testing.TB) {
	tb.Helper()
	if err := c.stop(); err != nil {
		tb.Fatal(err)
	}
}

// Start runs the server again on its port after a Stop; its databases are
// as they were.
func (c *Cluster) Start(tb testing.TB) {
	tb.Helper()
	if err := c.start(); err != nil {
		tb.Fatal(err)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tail is the end of a log, enough to see why a server did not start.
func tail(b []byte) string {
	const keep = 2000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}
