package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The report's numbers are written by these three functions only, so the
// terminal, the report page and the verdict never disagree on a figure.

// Percent writes a share (0..1) as a whole percentage. It rounds down, so a
// share just under 1 never reads as 100%, and writes a share above 0 but
// under 1% as "<1%", so something never reads as nothing.
func Percent(share float64) string {
	switch {
	case math.IsNaN(share) || share <= 0:
		return "0%"
	case share >= 1:
		return "100%"
	case share < 0.01:
		return "<1%"
	}
	return strconv.Itoa(int(share*100+1e-9)) + "%"
}

// Size writes a byte count: "512 B", "12.3 KB", "4.0 MB" (1 KB = 1,024 bytes).
func Size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return strconv.FormatInt(n, 10) + " B"
}

// Duration writes a time span for a report: "850 ms", "1.2 s", "42 s",
// "2 min 5 s", "1 h 5 min". Under ten seconds it keeps a tenth; above it,
// whole seconds, rounded up, so a wait is never understated.
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
		fallthrough
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	case d < 10*time.Second && d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	case d < 10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	s := int64(math.Ceil(d.Seconds()))
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600:
		if s%60 == 0 {
			return fmt.Sprintf("%d min", s/60)
		}
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
	m := (s + 59) / 60
	if m%60 == 0 {
		return fmt.Sprintf("%d h", m/60)
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}

// Millis is Duration of a count of milliseconds, as reports store them.
func Millis(ms int64) string { return Duration(time.Duration(ms) * time.Millisecond) }

// Span writes a length of time as people say it, in whole units from days
// down to milliseconds: "1 hour", "2 days", "1 hour 30 minutes". It is for
// policies and schedules; Duration is for measured times.
func Span(d time.Duration) string {
	if d <= 0 {
		return "0 seconds"
	}
	var parts []string
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}, {time.Millisecond, "millisecond"}} {
		if n := d / u.unit; n > 0 {
			name := u.name
			if n != 1 {
				name += "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
			d -= n * u.unit
		}
	}
	return strings.Join(parts, " ")
}

// Plural is "1 run" or "3 runs": a count with its noun, for every
// surface's sentences.
func Plural(n int, one, many string) string { return plural(n, one, many) }

// Sentence makes a text read as a sentence: trimmed, capitalised, ending
// with a full stop unless it ends with one of its own. Errors become these
// for the person reading them, on the terminal or in the API.
func Sentence(s string) string {
	s = capitalise(strings.TrimSpace(s))
	if s != "" && !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
		s += "."
	}
	return s
}

// Capitalise writes s with its first letter upper case.
func Capitalise(s string) string { return capitalise(s) }

// LowerFirst lower-cases the first letter of s, for a label inside a
// sentence, unless it starts an acronym ("HTTP status") or a name of two
// capitalised words ("Open Graph tags").
func LowerFirst(s string) string {
	r := []rune(s)
	words := strings.Fields(s)
	if len(r) == 0 || strings.IndexFunc(words[0][1:], unicode.IsUpper) >= 0 {
		return s
	}
	if len(words) > 1 && unicode.IsUpper([]rune(words[1])[0]) {
		return s
	}
	r[0] = unicode.ToLower(r[0])
	return string(r)
}
