package compare

import (
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		share float64
		want  string
	}{
		{0, "0%"}, {-1, "0%"}, {0.004, "<1%"}, {0.0099, "<1%"}, {0.01, "1%"}, {0.015, "1%"},
		{0.5, "50%"}, {0.996, "99%"}, {0.9999, "99%"}, {1, "100%"}, {1.2, "100%"},
	} {
		if got := Percent(tc.share); got != tc.want {
			t.Errorf("Percent(%v) = %q, want %q", tc.share, got, tc.want)
		}
	}
}

func TestSizeAndDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KB"}, {1536, "1.5 KB"}, {5 << 20, "5.0 MB"}} {
		if got := Size(tc.n); got != tc.want {
			t.Errorf("Size(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0 ms"}, {-time.Second, "0 ms"}, {850 * time.Millisecond, "850 ms"}, {1200 * time.Millisecond, "1.2 s"}, {time.Second, "1 s"},
		{9990 * time.Millisecond, "10.0 s"}, {41100 * time.Millisecond, "42 s"}, {time.Minute, "1 min"},
		{125 * time.Second, "2 min 5 s"}, {time.Hour, "1 h"}, {65 * time.Minute, "1 h 5 min"},
	} {
		if got := Duration(tc.d); got != tc.want {
			t.Errorf("Duration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
