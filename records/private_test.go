package records

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDataAtRestIsPrivate: a fresh data dir and every file SQLite writes
// into it (the database, its -wal and -shm) are for the owner alone.
func TestDataAtRestIsPrivate(t *testing.T) {
	if !modesMatter {
		t.Skip("no Unix file modes on this system")
	}
	dir := filepath.Join(t.TempDir(), "data")
	db := mustOpen(t, Config{DataDir: dir})
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := db.PutReport(bg, "r1", []byte("report"), false, t0, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{dir: 0o700}
	for _, name := range []string{FileName, FileName + "-wal", FileName + "-shm"} {
		want[filepath.Join(dir, name)] = 0o600
	}
	for path, mode := range want {
		st, err := os.Stat(path)
		if err != nil {
			t.Errorf("stat: %v", err)
			continue
		}
		if got := st.Mode().Perm(); got != mode {
			t.Errorf("%s has mode %04o, want %04o", path, got, mode)
		}
	}
}

// TestOpenRefusesReadableData: a data dir with files that others can
// read, or a database file others can read, is refused with a sentence
// naming the path and the fix; an empty open dir is made private.
func TestOpenRefusesReadableData(t *testing.T) {
	if !modesMatter {
		t.Skip("no Unix file modes on this system")
	}
	t.Run("empty open dir", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, 0o755)
		mustOpen(t, Config{DataDir: dir})
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("empty data dir mode %v, %v; want 0700", st.Mode().Perm(), err)
		}
	})
	t.Run("open dir with files", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		mustOpen(t, Config{DataDir: dir}).Close()
		os.Chmod(dir, 0o755)
		_, err := Open(bg, Config{DataDir: dir})
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "chmod 700 "+dir) {
			t.Errorf("Open of a 0755 data dir: %v; want ErrBadConfig naming %s and chmod 700", err, dir)
		}
	})
	t.Run("readable database file", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		mustOpen(t, Config{DataDir: dir}).Close()
		path := filepath.Join(dir, FileName)
		os.Chmod(path, 0o644)
		_, err := Open(bg, Config{DataDir: dir})
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), "chmod 600 "+path) {
			t.Errorf("Open with a 0644 %s: %v; want ErrBadConfig naming chmod 600 %s", FileName, err, path)
		}
	})
}

// privateTree makes dir 0700 and its files 0600, as a data dir made by an
// earlier run is (t.TempDir makes 0755 dirs under the usual umask).
func privateTree(tb testing.TB, dir string) {
	tb.Helper()
	if err := os.Chmod(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := os.Chmod(filepath.Join(dir, e.Name()), 0o600); err != nil {
				tb.Fatal(err)
			}
		}
	}
}
