package records

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/disktest"
	"lekta.dev/lekta/internal/pgtest"
)

// wantUnavailable checks that err fails closed and names the cause.
func wantUnavailable(tb testing.TB, what string, err error, cause string) {
	tb.Helper()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), cause) {
		tb.Fatalf("%s: %v; want ErrUnavailable saying %q", what, err, cause)
	}
	tb.Logf("%s: %v", what, err)
}

func TestSQLiteCorrupt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		write func(path string) error
	}{
		{"not a database", func(p string) error { return os.WriteFile(p, bytes.Repeat([]byte("garbage!"), 1024), 0o600) }},
		{"header with a damaged body", func(p string) error {
			db := mustOpen(t, Config{DataDir: filepath.Dir(p)})
			for i := range 200 {
				if err := db.PutReport(bg, fmt.Sprint(i), bytes.Repeat([]byte{'x'}, 2000), false, time.Now(), time.Now().Add(time.Hour)); err != nil {
					return err
				}
			}
			if err := db.Close(); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			noise := make([]byte, 64<<10)
			_, _ = rand.Read(noise)
			_, err = f.WriteAt(noise, 4096) // every page after the header
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.write(filepath.Join(dir, FileName)); err != nil {
				t.Fatal(err)
			}
			privateTree(t, dir)
			db, err := Open(bg, Config{DataDir: dir})
			if err == nil {
				// The damage may sit in pages the open did not read.
				defer db.Close()
				_, _, _, err = db.GetReport(bg, "7", time.Now())
			}
			wantUnavailable(t, "using a corrupt file", err, "corrupt or not a SQLite database")
		})
	}
}

// TestSQLiteLocked holds the write lock from another connection: a
// migration or a write waits for the busy timeout, then fails naming the
// lock; reads go on (WAL).
func TestSQLiteLocked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	holder := mustOpen(t, Config{DataDir: dir})
	conn, err := holder.SQL().Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(bg, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(bg, "ROLLBACK")

	db := mustOpen(t, Config{DataDir: dir, BusyTimeout: 200 * time.Millisecond})
	err = db.PutReport(bg, "r", []byte("x"), false, time.Now(), time.Now().Add(time.Hour))
	wantUnavailable(t, "a write while another process holds the lock", err, "locked by another process")
	if _, _, _, err := db.GetReport(bg, "r", time.Now()); err != nil {
		t.Fatalf("a read while another process holds the write lock: %v", err)
	}

	// A file that still needs its schema cannot be migrated while locked.
	fresh := t.TempDir()
	other := mustOpen(t, Config{DataDir: fresh})
	if _, err := other.SQL().Exec("DELETE FROM schema_migrations"); err != nil {
		t.Fatal(err)
	}
	c2, err := other.SQL().Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.ExecContext(bg, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer c2.ExecContext(bg, "ROLLBACK")
	_, err = Open(bg, Config{DataDir: fresh, BusyTimeout: 200 * time.Millisecond})
	wantUnavailable(t, "a migration while another process holds the lock", err, "locked by another process")
}

// TestSQLiteReadOnly opens a data dir on a read-only mount, empty and with
// a database in it: both refused, naming the cause.
func TestSQLiteReadOnly(t *testing.T) {
	t.Parallel()
	empty := disktest.Small(t, 4<<20)
	disktest.ReadOnly(t, empty)
	_, err := Open(bg, Config{DataDir: empty})
	wantUnavailable(t, "an empty read-only data dir", err, "not writable")

	full := disktest.Small(t, 4<<20)
	db, err := Open(bg, Config{DataDir: full, MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutReport(bg, "kept", []byte("x"), false, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	disktest.ReadOnly(t, full)
	_, err = Open(bg, Config{DataDir: full, MinFree: -1})
	wantUnavailable(t, "a read-only data dir holding a database", err, "not writable")
}

// TestSQLiteDiskFull: Ping refuses below the free-space floor; and with no
// floor, a write to a truly full disk fails closed naming the cause.
func TestSQLiteDiskFull(t *testing.T) {
	t.Parallel()
	dir := disktest.Small(t, 8<<20)
	db, err := Open(bg, Config{DataDir: dir, MinFree: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	disktest.Fill(t, dir, "filler")
	wantUnavailable(t, "Ping on a full disk", db.Ping(bg), "full")

	raw, err := Connect(bg, Config{DataDir: dir, MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	big := make([]byte, 1<<20)
	_, _ = rand.Read(big)
	err = raw.PutReport(bg, "big", big, false, time.Now(), time.Now().Add(time.Hour))
	wantUnavailable(t, "a write on a full disk", err, "full")
}

// TestPostgresDown: a URL where nothing listens, and a cluster stopped
// mid-run, fail closed naming the cause and never the password; the pool
// works again once PostgreSQL is back.
func TestPostgresDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	const secret = "pa55-w0rd_s3cret"
	_, err = Open(bg, Config{DatabaseURL: fmt.Sprintf("postgres://lekta:%s@127.0.0.1:%d/lekta", secret, port)})
	wantUnavailable(t, "Open with nothing listening", err, "nothing answers")
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error shows the password: %v", err)
	}

	c := pgtest.StartPrivate(t)
	db := mustOpen(t, Config{DatabaseURL: c.Database(t), CallTimeout: 2 * time.Second})
	if err := db.PutReport(bg, "before", []byte("x"), false, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	c.Stop(t)
	for name, call := range map[string]func() error{
		"ping": func() error { return db.Ping(bg) },
		"put":  func() error { return db.PutReport(bg, "r", []byte("x"), false, time.Now(), time.Now().Add(time.Hour)) },
		"get":  func() error { _, _, _, err := db.GetReport(bg, "before", time.Now()); return err },
	} {
		err := call()
		if !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), c.Password()) {
			t.Fatalf("%s with PostgreSQL stopped: %v; want ErrUnavailable without the password", name, err)
		}
	}
	c.Start(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _, _, err := db.GetReport(bg, "before", time.Now())
		if err == nil && string(b) == "x" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GetReport after PostgreSQL came back: %q, %v", b, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPostgresSecretNeverShown: every way a --database-url can fail keeps
// its password out of the message.
func TestPostgresSecretNeverShown(t *testing.T) {
	t.Parallel()
	c := pgtest.Shared(t)
	good := pgtest.Database(t)
	const secret = "Zq9-secret-Xy"
	cases := []struct{ name, url string }{
		{"unparsable", "postgres://lekta:" + secret + "@[::1"},
		{"bad port", "postgres://lekta:" + secret + "@127.0.0.1:notaport/db"},
		{"wrong password", strings.Replace(good, c.Password(), secret, 1)},
		{"password in the query", fmt.Sprintf("postgres://lekta@127.0.0.1:%d/db?password=%s&sslmode=disable", c.Port(), secret)},
		{"escaped password", fmt.Sprintf("postgres://lekta:%s%%2Fx@127.0.0.1:%d/nodb?sslmode=disable", secret, c.Port())},
		{"not postgres", "mysql://lekta:" + secret + "@127.0.0.1/db"},
		{"unknown option", "postgres://lekta:" + secret + "@127.0.0.1/db?bogus_option=" + secret},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(bg, Config{DatabaseURL: tc.url, CallTimeout: 3 * time.Second})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "%2Fx") {
				t.Fatalf("the error shows the password: %v", err)
			}
			t.Log(err)
		})
	}
}
