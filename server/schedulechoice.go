package server

import (
	"fmt"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/schedule"
)

// scheduleOption is one choice of the schedule field of the site forms.
type scheduleOption struct {
	Value, Words string
	Selected     bool
}

// scheduleChoices are the schedules a member picks from: daily, weekly and
// every few hours or days, those the service's minimum interval allows.
var scheduleChoices = []time.Duration{
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	48 * time.Hour, 72 * time.Hour,
}

// scheduleOptions lists the choices with cur selected; a saved schedule
// that is not among them (an API client may save "90m") is kept as one.
func scheduleOptions(cur string, min time.Duration) []scheduleOption {
	opts := []scheduleOption{{Value: "daily", Words: "Daily, at night"}, {Value: "weekly", Words: "Weekly, at night"}}
	for _, d := range scheduleChoices {
		if d >= min {
			opts = append(opts, scheduleOption{Value: shortDuration(d), Words: "Every " + compare.Span(d)})
		}
	}
	found := false
	for i := range opts {
		if opts[i].Value == cur {
			opts[i].Selected, found = true, true
		}
	}
	if !found && cur != "" {
		opts = append(opts, scheduleOption{Value: cur, Words: scheduleWords(cur), Selected: true})
	}
	return opts
}

// scheduleWords says a saved schedule in words, as the form's choices do:
// "Daily, at night", "Every 6 hours".
func scheduleWords(s string) string {
	sp, err := schedule.ParseSpec(s, 0)
	switch {
	case err != nil:
		return s
	case sp.Kind == schedule.Daily:
		return "Daily, at night"
	case sp.Kind == schedule.Weekly:
		return "Weekly, at night"
	}
	return "Every " + compare.Span(sp.Interval)
}

// shortDuration is the form value of an interval: "6h", "90m".
func shortDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return fmt.Sprintf("%dm", d/time.Minute)
}
