//go:build unix

package corpus

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive lock on file (created if missing), so that
// the test binaries of several packages building at once make one build.
func lockDir(file string) (unlock func(), err error) {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
