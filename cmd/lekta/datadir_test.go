package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/disktest"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
)

// lockHolderEnv, set to a data dir, makes the test binary a separate
// process that holds that database's write lock until its stdin closes.
const lockHolderEnv = "LEKTA_TEST_HOLD_LOCK"

// holdLock is the lock-holding process: it says "locked" once it holds the
// lock.
func holdLock(dir string) int {
	ctx := context.Background()
	db, err := records.Open(ctx, records.Config{DataDir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "hold lock:", err)
		return 1
	}
	defer db.Close()
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hold lock:", err)
		return 1
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		fmt.Fprintln(os.Stderr, "hold lock:", err)
		return 1
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_, _ = conn.ExecContext(ctx, "ROLLBACK")
	return 0
}

// startLockHolder runs holdLock on dir in another process and returns once
// it holds the lock; the lock is released when the test ends.
func startLockHolder(tb testing.TB, dir string) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+dir)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		tb.Fatalf("lock holder: %q, %v", line, err)
	}
}

// makeDatabase creates and migrates the database in dir, as a first run
// does, with one report in it; it returns the report's id.
func makeDatabase(tb testing.TB, dir string) string {
	tb.Helper()
	db, err := records.Open(context.Background(), records.Config{DataDir: dir, MinFree: -1})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	const id = "kept-report-before-the-fault"
	if err := db.PutReport(context.Background(), id, []byte("rkept"), false, time.Now(), time.Now().Add(time.Hour)); err != nil {
		tb.Fatal(err)
	}
	return id
}

// fileHash is the SHA-256 of a file, "" when it does not exist.
func fileHash(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// TestAuditFailsClosedOnDataDir runs "lekta audit" on data dirs that cannot
// record an audit: read-only, on a full disk, locked by another process, a
// corrupt file, a schema from a newer binary. Each exits 3 with one line
// naming the cause, prints no report, sends nothing to the site, and loses
// nothing that was stored before.
func TestAuditFailsClosedOnDataDir(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T) (dir string, after func(t *testing.T))
		cause string
	}{
		{"read-only, empty", func(t *testing.T) (string, func(*testing.T)) {
			dir := disktest.Small(t, 4<<20)
			disktest.ReadOnly(t, dir)
			return dir, nil
		}, "not writable"},
		{"read-only, with a database", func(t *testing.T) (string, func(*testing.T)) {
			dir := disktest.Small(t, 4<<20)
			makeDatabase(t, dir)
			disktest.ReadOnly(t, dir)
			return dir, nil
		}, "not writable"},
		{"disk full before the first run", func(t *testing.T) (string, func(*testing.T)) {
			dir := disktest.Small(t, 4<<20)
			disktest.Fill(t, dir, "filler")
			os.Chmod(dir, 0o700) // as lekta made it, not as disktest did
			return dir, nil
		}, "full"},
		{"disk full, with a database", func(t *testing.T) (string, func(*testing.T)) {
			dir := disktest.Small(t, 8<<20)
			id := makeDatabase(t, dir)
			filler := disktest.Fill(t, dir, "filler")
			return dir, func(t *testing.T) {
				if err := os.Remove(filler); err != nil {
					t.Fatal(err)
				}
				wantKept(t, dir, id)
			}
		}, "full"},
		{"locked by another process", func(t *testing.T) (string, func(*testing.T)) {
			dir := t.TempDir()
			id := makeDatabase(t, dir)
			startLockHolder(t, dir)
			return dir, func(t *testing.T) { wantKept(t, dir, id) }
		}, "locked by another process"},
		{"corrupt file", func(t *testing.T) (string, func(*testing.T)) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, records.FileName), bytes.Repeat([]byte("not sqlite"), 500), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir, 0o700) // as lekta made it, not as t.TempDir did
			return dir, nil
		}, "corrupt or not a SQLite database"},
		{"schema of a newer binary", func(t *testing.T) (string, func(*testing.T)) {
			dir := t.TempDir()
			makeDatabase(t, dir)
			db, err := records.Connect(context.Background(), records.Config{DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL().Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'from_the_future', 0)"); err != nil {
				t.Fatal(err)
			}
			_ = db.Close()
			path := filepath.Join(dir, records.FileName)
			before := fileHash(t, path)
			return dir, func(t *testing.T) {
				if after := fileHash(t, path); after != before {
					t.Error("the database of a newer schema was written to")
				}
			}
		}, "newer than this binary knows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			site := testsite.Start(t)
			dir, after := tc.setup(t)
			args := append([]string{"audit", "--json", "--chromium", "/bin/true"}, siteArgs(site)...)
			code, out, errOut := runCLIEnv(dataDirEnv(dir), append(args, "http://shop.example/index.html")...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code != exitNotRun || len(lines) != 1 || !strings.Contains(errOut, tc.cause) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 3 and one line saying %q", code, errOut, tc.cause)
			}
			if out != "" {
				t.Errorf("a report was printed: %s", out)
			}
			if n := len(site.Hits()); n != 0 {
				t.Errorf("%d requests reached the site", n)
			}
			t.Log(strings.TrimSpace(errOut))
			if after != nil {
				after(t)
			}
		})
	}
}

// wantKept checks that the report stored before a fault is still there.
func wantKept(tb testing.TB, dir, id string) {
	tb.Helper()
	db, err := records.Connect(context.Background(), records.Config{DataDir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	if b, _, _, err := db.GetReport(context.Background(), id, time.Now()); err != nil || string(b) != "rkept" {
		tb.Errorf("the report stored before the fault: %q, %v", b, err)
	}
}

// TestAuditDatabaseFlags: --database-url without --redis-url is refused
// naming --redis-url; PostgreSQL that does not answer at start-up refuses
// the audit naming the cause; neither message shows the password.
func TestAuditDatabaseFlags(t *testing.T) {
	redisURL, _ := redistest.Shared(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("postgres://lekta:Sup3r-s3cret@127.0.0.1:%d/lekta", l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cases := []struct {
		name  string
		flags []string
		code  int
		want  string
	}{
		{"database url alone", []string{"--database-url", closed}, exitBadInput, "--database-url needs --redis-url"},
		{"not a postgres url", []string{"--redis-url", redisURL, "--database-url", "mysql://u:Sup3r-s3cret@h/db"}, exitBadInput, "--database-url"},
		{"postgres down", []string{"--redis-url", redisURL, "--database-url", closed}, exitNotRun, "nothing answers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			site := testsite.Start(t)
			args := append(append([]string{"audit", "--json", "--chromium", "/bin/true"}, tc.flags...), siteArgs(site)...)
			code, out, errOut := runCLI(t, append(args, "http://shop.example/index.html")...)
			if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and one line saying %q", code, errOut, tc.code, tc.want)
			}
			if strings.Contains(errOut+out, "Sup3r-s3cret") {
				t.Errorf("the password was printed:\n%s%s", out, errOut)
			}
			if n := len(site.Hits()); n != 0 || out != "" {
				t.Errorf("%d requests reached the site; stdout %q", n, out)
			}
		})
	}
}

// TestDataDirDefaults: without --data-dir the database goes to
// $XDG_STATE_HOME/lekta, else ~/.local/state/lekta, created with mode 0700;
// LEKTA_DATA_DIR and --data-dir name another; with none of them the error
// names the flag.
func TestDataDirDefaults(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string // the database's directory, "" for an error
	}{
		{"XDG_STATE_HOME", map[string]string{"XDG_STATE_HOME": root + "/xdg", "HOME": root + "/home1"}, nil, root + "/xdg/lekta"},
		{"relative XDG_STATE_HOME is ignored", map[string]string{"XDG_STATE_HOME": "rel", "HOME": root + "/home2"}, nil, root + "/home2/.local/state/lekta"},
		{"HOME", map[string]string{"HOME": root + "/home3"}, nil, root + "/home3/.local/state/lekta"},
		{"LEKTA_DATA_DIR", map[string]string{"LEKTA_DATA_DIR": root + "/env", "HOME": root + "/home4"}, nil, root + "/env"},
		{"flag wins", map[string]string{"LEKTA_DATA_DIR": root + "/env2"}, []string{"--data-dir", root + "/flag"}, root + "/flag"},
		{"nothing to place it", nil, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			code, out, errOut := runCLIEnv(getenv, append([]string{"db", "migrate"}, tc.args...)...)
			if tc.want == "" {
				if code != exitBadInput || !strings.Contains(errOut, "--data-dir") {
					t.Fatalf("exit %d, stderr %q; want 2 naming --data-dir", code, errOut)
				}
				return
			}
			if code != exitOK || !strings.Contains(out, filepath.Join(tc.want, records.FileName)) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want the database in %s", code, out, errOut, tc.want)
			}
			st, err := os.Stat(tc.want)
			if err != nil || st.Mode().Perm() != 0o700 {
				t.Fatalf("data dir %s: %v, mode %v; want 0700", tc.want, err, st.Mode().Perm())
			}
		})
	}
}

// TestDBCommands runs lekta db status and db migrate on SQLite and
// PostgreSQL: a new database is pending (status exit 1, and status creates
// nothing), migrate applies, status is then up to date; a newer schema is
// refused by both with exit 3.
func TestDBCommands(t *testing.T) {
	for _, kind := range []struct {
		name string
		flag func(t *testing.T) []string
	}{
		{"sqlite", func(t *testing.T) []string { return []string{"--data-dir", filepath.Join(t.TempDir(), "d")} }},
		{"postgres", func(t *testing.T) []string { return []string{"--database-url", pgtest.Database(t)} }},
	} {
		t.Run(kind.name, func(t *testing.T) {
			flags := kind.flag(t)
			db := func(cmd string) (int, string, string) { return runCLI(t, append([]string{"db", cmd}, flags...)...) }
			// Every migration this binary knows, so that a new one needs no edit here.
			known, err := records.Known(records.SQLite)
			if err != nil {
				t.Fatal(err)
			}
			all := names(known)
			code, out, errOut := db("status")
			if code != exitFailure || !strings.Contains(out, fmt.Sprintf("%d pending (%s)", len(known), all)) {
				t.Fatalf("status of a new database: exit %d\n%s%s", code, out, errOut)
			}
			if kind.name == "sqlite" {
				if _, err := os.Stat(flags[1]); !os.IsNotExist(err) {
					t.Errorf("db status created the data dir (%v)", err)
				}
			}
			if code, out, errOut = db("migrate"); code != exitOK || !strings.Contains(out, "applied "+all) {
				t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
			}
			if code, out, errOut = db("status"); code != exitOK || !strings.Contains(out, fmt.Sprintf("version %d, up to date", len(known))) {
				t.Fatalf("status after migrate: exit %d\n%s%s", code, out, errOut)
			}
			wantTables := []string{"reports          0 rows", "request_records  0 rows"}
			if kind.name == "postgres" {
				wantTables = []string{"partitions", "request_records_default", "rows no partition covers",
					"reports_p" + time.Now().UTC().Format("20060102"), "request_records_p" + time.Now().UTC().Format("2006010215")}
			}
			for _, want := range wantTables {
				if !strings.Contains(out, want) {
					t.Errorf("status after migrate does not show %q:\n%s", want, out)
				}
			}
			if code, out, _ = db("migrate"); code != exitOK || !strings.Contains(out, "nothing to do") {
				t.Fatalf("second migrate: exit %d\n%s", code, out)
			}
			rc := records.Config{DatabaseURL: ""}
			if kind.name == "sqlite" {
				rc.DataDir = flags[1]
			} else {
				rc.DatabaseURL = flags[1]
			}
			raw, err := records.Connect(context.Background(), rc)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.SQL().Exec(fmt.Sprintf("INSERT INTO schema_migrations (version, name, applied_at) VALUES (%d, 'x', 0), (%d, 'y', 0)", len(known)+1, len(known)+2)); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []string{"status", "migrate"} {
				if code, out, errOut = db(cmd); code != exitNotRun || !strings.Contains(out+errOut, "newer than this binary") {
					t.Errorf("%s of a newer schema: exit %d\n%s%s", cmd, code, out, errOut)
				}
			}
		})
	}
}

// TestRefusesDataOthersCanRead: serve, audit and members refuse a data dir
// or a database file that other users can read, with exit status 2 and one
// sentence naming the path and the chmod that fixes it.
func TestRefusesDataOthersCanRead(t *testing.T) {
	tests := []struct {
		name  string
		open  func(dir string) // what others may read
		fixed func(dir string) string
	}{
		{"data dir", func(dir string) { os.Chmod(dir, 0o755) }, func(dir string) string { return "chmod 700 " + dir }},
		{"database file", func(dir string) { os.Chmod(filepath.Join(dir, records.FileName), 0o644) }, func(dir string) string {
			return "chmod 600 " + filepath.Join(dir, records.FileName)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			makeDatabase(t, dir)
			tc.open(dir)
			for _, args := range [][]string{{"members", "list"}, {"audit", "--chromium", "/bin/true", "http://shop.example/"}, {"serve", "--addr", "127.0.0.1:0"}} {
				code, _, errOut := runCLIEnv(dataDirEnv(dir), args...)
				lines := strings.Split(strings.TrimSpace(errOut), "\n")
				if code != exitBadInput || len(lines) != 1 || !strings.Contains(errOut, tc.fixed(dir)) {
					t.Errorf("lekta %s: exit %d, stderr:\n%s\nwant exit 2 and one line saying %q", args[0], code, errOut, tc.fixed(dir))
				}
			}
		})
	}
}
