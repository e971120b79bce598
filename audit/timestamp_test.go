package audit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestTimestampHasMilliseconds: a report's started_at, as every time of the
// API, has exactly three digits of milliseconds in UTC, and reads back.
func TestTimestampHasMilliseconds(t *testing.T) {
	t.Parallel()
	cases := map[time.Time]string{
		time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC):                           "2026-12-01T10:00:00.000Z",
		time.Date(2026, 12, 1, 10, 0, 0, 500_000_000, time.UTC):                 "2026-12-01T10:00:00.500Z",
		time.Date(2026, 12, 1, 11, 0, 0, 123_456_789, time.FixedZone("", 3600)): "2026-12-01T10:00:00.123Z",
	}
	for at, want := range cases {
		r := &Report{Schema: Schema, StartedAt: At(at)}
		b, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"started_at": "`+want+`"`) {
			t.Errorf("started_at of %v encodes as %s, want %s", at, b[:80], want)
		}
		var back Report
		if err := json.Unmarshal(b, &back); err != nil || !back.StartedAt.Equal(at.Truncate(time.Millisecond)) {
			t.Errorf("started_at %s reads back as %v (%v)", want, back.StartedAt, err)
		}
	}
}
