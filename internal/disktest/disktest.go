// Package disktest gives tests real file systems that misbehave: a small
// tmpfs that a test can fill to the last byte, and remount read-only. Only
// tests import it.
//
// Mounting needs root (CAP_SYS_ADMIN), as CI runs; without it a test fails
// when the environment variable CI is set and is skipped otherwise.
package disktest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Small mounts a tmpfs of size bytes on a new empty directory and returns
// the directory; it is unmounted when the test ends.
func Small(tb testing.TB, size int64) string {
	tb.Helper()
	if os.Geteuid() != 0 {
		missing(tb, "mounting a tmpfs needs root")
	}
	dir := tb.TempDir()
	opts := "size=" + strconv.FormatInt(size, 10) + ",mode=0755"
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		missing(tb, "mount a tmpfs on %s: %v", dir, err)
	}
	tb.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			// Still open somewhere (a process the test killed): detach it.
			if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
				tb.Errorf("unmount %s: %v", dir, err)
			}
		}
	})
	return dir
}

// Fill writes the file name in dir until the file system is full, so that
// the next write of any size fails with ENOSPC, and returns its path.
func Fill(tb testing.TB, dir, name string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		tb.Fatalf("fill %s: %v", dir, err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for len(chunk) > 0 {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				tb.Fatalf("fill %s: %v", dir, err)
			}
			chunk = chunk[:len(chunk)/2]
		}
	}
	return path
}

// ReadOnly remounts the tmpfs at dir read-only, as a disk remounted after
// errors would be; every write then fails with EROFS, even as root.
func ReadOnly(tb testing.TB, dir string) {
	tb.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		tb.Fatalf("remount %s read-only: %v", dir, err)
	}
}

func missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s (CI is set, so this fails instead of skipping)", msg)
	}
	tb.Skipf("%s; skipping (set CI to make this a failure)", msg)
}
