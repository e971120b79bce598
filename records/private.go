package records

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The data dir holds member e-mails, CSRF tokens and sealed webhook
// secrets, so it and every file in it are for the service's user alone:
// the dir is 0700, each file 0600 (SQLite gives its -wal and -shm files
// the mode of the database file). An existing dir or file that others can
// read is refused rather than quietly changed, since its contents may
// already have been read; an empty dir is simply made private.

// othersBits are the permission bits of group and others.
const othersBits fs.FileMode = 0o077

// PrivateDir makes sure dir exists and only its owner can enter it: a
// missing dir is created 0700, an empty one is made 0700, and a dir that
// others can read with files in it, or any file in it that others can
// read, is an ErrBadConfig naming the path and the chmod that fixes it.
func PrivateDir(dir string) error {
	if !modesMatter {
		return os.MkdirAll(dir, 0o700)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create data dir %s: %w", dir, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read data dir %s: %w", dir, err)
	}
	// The mode is read after the entries: a process opening the same
	// empty dir makes it private before it writes a file in it, so once
	// its file is seen, so is its chmod (six openers at once raced here).
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data dir %s: %w", dir, err)
	}
	if st.Mode().Perm()&othersBits != 0 {
		if len(entries) > 0 {
			return fmt.Errorf("%w: the data dir %s can be read by other users (mode %04o); make it private with: chmod 700 %s",
				ErrBadConfig, dir, st.Mode().Perm(), dir)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("make data dir %s private: %w", dir, err)
		}
	}
	for _, e := range entries {
		if err := checkPrivate(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// checkPrivate refuses a file that others can read or write; a symlink is
// not followed.
func checkPrivate(path string) error {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return refuseShared("file", path, st)
}

// refuseShared is an ErrBadConfig naming the file (what, at path), its
// mode and the chmod that fixes it when st, the file's, lets others read
// or write it.
func refuseShared(what, path string, st fs.FileInfo) error {
	if st.Mode().Perm()&othersBits != 0 {
		return fmt.Errorf("%w: the %s %s can be read by other users (mode %04o); make it private with: chmod 600 %s",
			ErrBadConfig, what, path, st.Mode().Perm(), path)
	}
	return nil
}

// PrivateFile creates path with mode 0600 when it is missing, so that what
// a library creates there later (SQLite's -wal and -shm) is private too,
// and refuses an existing one that others can read.
func PrivateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		return f.Close()
	case errors.Is(err, fs.ErrExist):
		if modesMatter {
			return checkPrivate(path)
		}
		return nil
	}
	return fmt.Errorf("create %s: %w", path, err)
}
