package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"lekta.dev/lekta/compare"
)

// Conditions of ParseSpec and ParseWindow.
var (
	// ErrBadSchedule: the schedule is not "daily", "weekly" or a duration.
	ErrBadSchedule = errors.New("bad schedule")
	// ErrTooFrequent: the schedule asks for runs closer than the minimum interval.
	ErrTooFrequent = errors.New("schedule more frequent than the minimum interval")
)

// SpecError is a schedule ParseSpec refuses: the condition (ErrBadSchedule
// or ErrTooFrequent), the schedule as written and why, in words.
type SpecError struct {
	Err  error
	Spec string
	Why  string
}

func (e *SpecError) Error() string { return fmt.Sprintf("%v: %q: %s", e.Err, e.Spec, e.Why) }

func (e *SpecError) Unwrap() error { return e.Err }

// Sentence is the refusal for a person who typed the schedule: "The
// schedule “10m” is too frequent: re-audits of a site are at least 1 h
// apart on this service."
func (e *SpecError) Sentence() string {
	what := "is a bad schedule"
	if errors.Is(e.Err, ErrTooFrequent) {
		what = "is too frequent"
	}
	return "The schedule “" + e.Spec + "” " + what + ": " + e.Why + "."
}

// Kind of a Spec.
type Kind int

// Kinds of schedule.
const (
	Every Kind = iota
	Daily
	Weekly
)

// Spec is a saved site's schedule: daily or weekly, at a stable per-site
// moment inside the night window, or every Interval.
type Spec struct {
	Kind     Kind
	Interval time.Duration
}

// ParseSpec reads "daily", "weekly" or an interval such as "6h" and refuses
// one below min (ErrTooFrequent) or unreadable (ErrBadSchedule).
func ParseSpec(s string, min time.Duration) (Spec, error) {
	switch s {
	case "daily":
		sp := Spec{Kind: Daily, Interval: 24 * time.Hour}
		return sp, sp.check(s, min)
	case "weekly":
		sp := Spec{Kind: Weekly, Interval: 7 * 24 * time.Hour}
		return sp, sp.check(s, min)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || len(s) > 32 {
		return Spec{}, &SpecError{Err: ErrBadSchedule, Spec: s, Why: "write daily, weekly or an interval such as 6h or 90m"}
	}
	if d > 366*24*time.Hour {
		return Spec{}, &SpecError{Err: ErrBadSchedule, Spec: s, Why: "at most a year between re-audits"}
	}
	sp := Spec{Kind: Every, Interval: d.Truncate(time.Second)}
	if sp.Interval == 0 {
		return Spec{}, &SpecError{Err: ErrBadSchedule, Spec: s, Why: "an interval is counted in whole seconds"}
	}
	return sp, sp.check(s, min)
}

// AtLeast is the schedule as it runs under a minimum interval: one saved
// when the minimum was lower runs every min instead, so that no site is
// re-audited more often than the service's policy says today.
func (sp Spec) AtLeast(min time.Duration) Spec {
	if sp.Interval >= min {
		return sp
	}
	return Spec{Kind: Every, Interval: min.Truncate(time.Second)}
}

func (sp Spec) check(s string, min time.Duration) error {
	if sp.Interval < min {
		return &SpecError{Err: ErrTooFrequent, Spec: s, Why: "re-audits of a site are at least " + compare.Span(min) + " apart on this service"}
	}
	return nil
}

// Window is the night window in the operator's time zone where daily and
// weekly re-audits fall: from Start to End after midnight (End may be past
// midnight of the next day, as in 22:00-02:00).
type Window struct {
	Start, End time.Duration
	Loc        *time.Location
}

// ParseWindow reads "01:00-05:00" in the time zone loc.
func ParseWindow(s string, loc *time.Location) (Window, error) {
	a, b, ok := strings.Cut(s, "-")
	start, err1 := clock(a)
	end, err2 := clock(b)
	if !ok || err1 != nil || err2 != nil || start == end {
		return Window{}, fmt.Errorf("%q: want HH:MM-HH:MM, such as 01:00-05:00, of two different times", s)
	}
	if end < start {
		end += 24 * time.Hour
	}
	if loc == nil {
		loc = time.UTC
	}
	return Window{Start: start, End: end, Loc: loc}, nil
}

func clock(s string) (time.Duration, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 || len(m) != 2 {
		return 0, errors.New("bad time of day")
	}
	return time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute, nil
}

// String is "01:00-05:00".
func (w Window) String() string {
	f := func(d time.Duration) string {
		d %= 24 * time.Hour
		return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return f(w.Start) + "-" + f(w.End)
}

// seed is a stable pseudo-random number of the site.
func seed(siteID, salt string) uint64 {
	sum := sha256.Sum256([]byte(salt + "\x00" + siteID))
	return binary.BigEndian.Uint64(sum[:8])
}

// Prev is the latest run of the site due at or before t.
func (sp Spec) Prev(siteID string, t time.Time, w Window) time.Time {
	if sp.Kind == Every {
		iv := sp.Interval.Milliseconds()
		phase := int64(seed(siteID, "phase") % uint64(iv))
		k := floorDiv(t.UnixMilli()-phase, iv)
		return time.UnixMilli(k*iv + phase).UTC()
	}
	day := time.Date(t.In(w.Loc).Year(), t.In(w.Loc).Month(), t.In(w.Loc).Day(), 0, 0, 0, 0, w.Loc)
	for i := 0; i < 9; i++ {
		d := day.AddDate(0, 0, -i)
		if at, ok := sp.on(siteID, d, w); ok && !at.After(t) {
			return at.UTC()
		}
	}
	return time.Time{} // unreachable: a week always has a run
}

// Next is the first run of the site due after t.
func (sp Spec) Next(siteID string, t time.Time, w Window) time.Time {
	if sp.Kind == Every {
		return sp.Prev(siteID, t, w).Add(sp.Interval)
	}
	day := time.Date(t.In(w.Loc).Year(), t.In(w.Loc).Month(), t.In(w.Loc).Day(), 0, 0, 0, 0, w.Loc)
	for i := -1; i < 9; i++ {
		d := day.AddDate(0, 0, i)
		if at, ok := sp.on(siteID, d, w); ok && at.After(t) {
			return at.UTC()
		}
	}
	return time.Time{}
}

// on is the site's run that belongs to the local day starting at midnight
// day, if the schedule has one that day.
func (sp Spec) on(siteID string, day time.Time, w Window) (time.Time, bool) {
	if sp.Kind == Weekly {
		// The day of the week, from the site: days since 1970-01-01 modulo 7.
		days := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC).Unix() / 86400
		if uint64(days%7) != seed(siteID, "weekday")%7 {
			return time.Time{}, false
		}
	}
	span := (w.End - w.Start) / time.Second
	offset := time.Duration(seed(siteID, "moment")%uint64(span)) * time.Second
	// In wall-clock time, so a DST change does not move the run out of the
	// window (time.Date normalises the seconds past midnight).
	wall := int((w.Start + offset) / time.Second)
	return time.Date(day.Year(), day.Month(), day.Day(), 0, 0, wall, 0, w.Loc), true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
