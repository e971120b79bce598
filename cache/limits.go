package cache

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Window is one sliding-log rate limit: at most N audits of a host may start
// within any span of length Per. A start at time s occupies the window
// [s, s+Per), to the millisecond.
type Window struct {
	N   int
	Per time.Duration
}

// String formats the window the way ParseWindows reads it and the way refusal
// reasons name it, e.g. "1/1m", "5/1h", "100/1d", "3/1m30s".
func (w Window) String() string {
	return strconv.Itoa(w.N) + "/" + formatPer(w.Per)
}

// formatPer writes a duration compactly: whole days as "Nd", otherwise the
// non-zero hour, minute, second and millisecond parts ("1h30m", "500ms").
func formatPer(d time.Duration) string {
	const day = 24 * time.Hour
	if d >= day && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	if d <= 0 {
		return d.String()
	}
	var b strings.Builder
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if n := d / u.unit; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10))
			b.WriteString(u.name)
			d -= n * u.unit
		}
	}
	if d > 0 { // sub-millisecond remainder; ParseWindows never produces one
		b.WriteString(d.String())
	}
	return b.String()
}

// FormatWindows writes windows the way ParseWindows reads them, e.g.
// "1/1m,5/1h": for flag defaults, the /bot page and the docs.
func FormatWindows(ws []Window) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.String()
	}
	return strings.Join(parts, ",")
}

// ParseWindows reads a comma-separated list of N/duration pairs such as
// "1/1m,5/1h". Durations use Go syntax (time.ParseDuration) plus whole days
// ("1d"); they must be whole milliseconds. Errors name the offending part.
func ParseWindows(s string) ([]Window, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("parse rate windows: empty, want N/duration pairs like 1/1m,5/1h")
	}
	parts := strings.Split(s, ",")
	out := make([]Window, 0, len(parts))
	for i, part := range parts {
		w, err := parseWindow(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("parse rate window %d %q: %w", i+1, part, err)
		}
		out = append(out, w)
	}
	return out, nil
}

func parseWindow(s string) (Window, error) {
	n, per, ok := strings.Cut(s, "/")
	if !ok {
		return Window{}, errors.New("want N/duration, e.g. 1/1m")
	}
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil {
		return Window{}, fmt.Errorf("count %q is not a whole number", n)
	}
	d, err := parsePer(strings.TrimSpace(per))
	if err != nil {
		return Window{}, err
	}
	w := Window{N: count, Per: d}
	return w, w.validate()
}

func parsePer(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 3650 {
			return 0, fmt.Errorf("duration %q: want a whole number of days between 1 and 3650", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w", s, err)
	}
	return d, nil
}

func (w Window) validate() error {
	switch {
	case w.N < 1:
		return fmt.Errorf("count %d: must be at least 1", w.N)
	case w.Per < time.Millisecond:
		return fmt.Errorf("duration %s: must be at least 1ms", w.Per)
	case w.Per%time.Millisecond != 0:
		return fmt.Errorf("duration %s: must be whole milliseconds", w.Per)
	}
	return nil
}

// DefaultStartSlack is the service's Limits.StartSlack.
const DefaultStartSlack = 500 * time.Millisecond

// DefaultTypical is Limits.Typical when it is zero: the top of the 5–30 s a
// typical audit takes.
const DefaultTypical = 30 * time.Second

// Limits are the per-host rules and retention times a Store enforces.
type Limits struct {
	// Windows are the sliding-log start limits per host; at least one.
	Windows []Window
	// Concurrency is how many audits of one host may run at a time.
	Concurrency int
	// CacheTTL is how long a completed result answers repeats of its URL,
	// counted from completion and not refreshed by reads.
	CacheTTL time.Duration
	// ReportTTL is how long a report stays retrievable by its id.
	ReportTTL time.Duration
	// LeaseTTL is how long a lease lives after its holder's last renewal,
	// which bounds how long a crashed holder blocks its host once its
	// audit could no longer be running.
	LeaseTTL time.Duration
	// LeaseMin is the least a lease lives from its admission, whatever the
	// renewals say: the hard audit deadline plus a margin. A holder that
	// cannot renew (a paused or frozen process) cannot stop its own
	// connections either, so no other audit of the host may start before
	// the holder's audit could no longer be running. Zero: LeaseTTL alone.
	LeaseMin time.Duration
	// Typical is how long an audit is expected to take: a refusal because
	// the host is busy says to come back when the running audit is
	// expected to end (its start plus Typical), not when its lease expires.
	// Zero: DefaultTypical.
	Typical time.Duration
	// StartSlack is added to a reserved start that a window delays: an
	// audit's first request reaches the site a little after its
	// admission, so reserved starts exactly a window apart could reach
	// it a hair closer. Zero in Defaults; the service uses DefaultStartSlack.
	StartSlack time.Duration
	// MaxReportBytes caps a stored report after compression.
	MaxReportBytes int
}

// Defaults returns the limits LektaBot promises site operators: per host one
// audit at a time, at most 1 started per minute and 5 per hour, repeats
// answered from the cache for 15 minutes, reports kept 30 days, leases of
// 90 s (the 75 s audit deadline plus 15 s), reports of at most 2 MiB
// compressed, and 30 s as the typical audit.
func Defaults() Limits {
	return Limits{
		Windows:        []Window{{N: 1, Per: time.Minute}, {N: 5, Per: time.Hour}},
		Concurrency:    1,
		CacheTTL:       15 * time.Minute,
		ReportTTL:      30 * 24 * time.Hour,
		LeaseTTL:       90 * time.Second,
		Typical:        DefaultTypical,
		MaxReportBytes: 2 << 20,
	}
}

// Validate reports the first setting that a Store cannot work with, naming it.
func (l Limits) Validate() error {
	if len(l.Windows) == 0 {
		return errors.New("limits: rate windows: at least one is required")
	}
	for i, w := range l.Windows {
		if err := w.validate(); err != nil {
			return fmt.Errorf("limits: rate window %d (%s): %w", i+1, w, err)
		}
	}
	if l.Concurrency < 1 {
		return fmt.Errorf("limits: per-host concurrency %d: must be at least 1", l.Concurrency)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"cache TTL", l.CacheTTL}, {"report TTL", l.ReportTTL}, {"lease TTL", l.LeaseTTL}} {
		if d.v < time.Millisecond || d.v%time.Millisecond != 0 {
			return fmt.Errorf("limits: %s %s: must be whole milliseconds, at least 1ms", d.name, d.v)
		}
	}
	if l.LeaseMin < 0 || l.LeaseMin%time.Millisecond != 0 {
		return fmt.Errorf("limits: lease minimum %s: must be whole milliseconds, not negative", l.LeaseMin)
	}
	if l.StartSlack < 0 || l.StartSlack%time.Millisecond != 0 {
		return fmt.Errorf("limits: start slack %s: must be whole milliseconds, not negative", l.StartSlack)
	}
	if l.Typical < 0 || l.Typical%time.Millisecond != 0 {
		return fmt.Errorf("limits: typical audit %s: must be whole milliseconds, not negative", l.Typical)
	}
	if l.MaxReportBytes < 1 {
		return fmt.Errorf("limits: max report size %d: must be positive", l.MaxReportBytes)
	}
	return nil
}

// longest is the longest window; starts older than that no longer matter.
// firstLease is the expiry of a lease admitted at now (unix ms): LeaseTTL
// from now, and at least LeaseMin.
func (l Limits) firstLease(now int64) int64 {
	return now + max(l.LeaseTTL, l.LeaseMin).Milliseconds()
}

// typical is Typical or its default, in ms.
func (l Limits) typical() int64 {
	if l.Typical <= 0 {
		return DefaultTypical.Milliseconds()
	}
	return l.Typical.Milliseconds()
}

func (l Limits) longest() time.Duration {
	var d time.Duration
	for _, w := range l.Windows {
		d = max(d, w.Per)
	}
	return d
}

// reason names constraint i of a refusal: 0 is concurrency, 1 to
// len(Windows) the i-th window, len(Windows)+1 the URL's own reserved start.
func (l Limits) reason(i int) string {
	switch {
	case i == len(l.Windows)+1:
		return ReasonReserved
	case i <= 0 || i > len(l.Windows):
		return ReasonConcurrency
	}
	return l.Windows[i-1].String()
}
