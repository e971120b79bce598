package disktest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestSmallFillReadOnly(t *testing.T) {
	dir := Small(t, 1<<20)
	Fill(t, dir, "filler")
	if err := os.WriteFile(filepath.Join(dir, "more"), []byte("x"), 0o600); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on the full tmpfs: %v, want ENOSPC", err)
	}
	ReadOnly(t, dir)
	if err := os.Remove(filepath.Join(dir, "filler")); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("remove on the read-only tmpfs: %v, want EROFS", err)
	}
}
