//go:build linux || darwin || freebsd

package records

import (
	"fmt"
	"syscall"
)

// modesMatter: file modes keep other users out on this system.
const modesMatter = true

// writable fails when the process cannot create files in dir (a read-only
// mount, or missing permission).
func writable(dir string) error {
	const wOK = 2
	return syscall.Access(dir, wOK)
}

// freeBytes is the space in dir's file system available to this process.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs: %w", err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
