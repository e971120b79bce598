package audit

import (
	"encoding/json"
	"time"
)

// TimestampLayout is the one form of a time in the JSON of reports and of
// the API: RFC 3339 in UTC with exactly three digits of milliseconds.
const TimestampLayout = "2006-01-02T15:04:05.000Z07:00"

// Timestamp is a time that encodes as TimestampLayout, so every time a
// client reads has one precision ("…T10:00:00.500Z", never "…T10:00:00.5Z"
// beside "…T10:00:00.123456789Z"). It decodes any RFC 3339 time.
type Timestamp struct{ time.Time }

// At is t as a Timestamp.
func At(t time.Time) Timestamp { return Timestamp{t} }

// MarshalJSON writes t in UTC with milliseconds.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.UTC().Format(TimestampLayout))
}

// UnmarshalJSON reads an RFC 3339 time.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	return t.Time.UnmarshalJSON(b)
}
