package cache

import (
	"fmt"
	"time"
)

// maxProgressField bounds the URL and step of a progress entry.
const maxProgressField = 8 << 10

// checkProgress rejects a progress entry that cannot be stored.
func checkProgress(p Progress) error {
	if err := checkID(p.ID); err != nil {
		return fmt.Errorf("%w: %w", ErrNoProgress, err)
	}
	switch {
	case p.URL == "" || len(p.URL) > maxProgressField:
		return fmt.Errorf("%w: want a URL of 1 to %d bytes", ErrNoProgress, maxProgressField)
	case p.Status != ProgressQueued && p.Status != ProgressRunning:
		return fmt.Errorf("%w: status %q, want %q or %q", ErrNoProgress, p.Status, ProgressQueued, ProgressRunning)
	case len(p.Step) > 64 || p.Position < 0:
		return fmt.Errorf("%w: step of %d bytes or position %d", ErrNoProgress, len(p.Step), p.Position)
	}
	return nil
}

// progressExpiry is when an entry set at now (unix ms) expires: its TTL
// from now, or from the queued audit's start when that is later.
func progressExpiry(p Progress, now int64) int64 {
	base := now
	if !p.StartsAt.IsZero() {
		base = max(base, p.StartsAt.UnixMilli())
	}
	return base + progressTTL(p).Milliseconds()
}

// progressTTL is how long the entry p lives past its start or its setting.
func progressTTL(p Progress) time.Duration {
	return max(ProgressTTL, p.Keep)
}
