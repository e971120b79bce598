package main

import (
	"errors"
	"flag"
	"fmt"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
)

// exitFindings is the exit status of an audit that ran and has a finding
// at or above --fail-on, so a deploy pipeline can stop on it.
const exitFindings = 4

// failOn is the --fail-on flag: never (the default), critical or warning.
type failOn string

func (f *failOn) String() string { return string(*f) }

func (f *failOn) Set(v string) error {
	switch v {
	case "never", "critical", "warning":
		*f = failOn(v)
		return nil
	}
	return fmt.Errorf("want never, critical or warning, got %q", v)
}

// registerFailOn adds --fail-on to fs.
func registerFailOn(fs *flag.FlagSet) *failOn {
	f := failOn("never")
	fs.Var(&f, "fail-on", "exit 4 when a finding at or above this severity exists: never, critical or warning")
	return &f
}

// gate returns the exit-4 error when rep has findings at or above the
// threshold, nil otherwise.
func (f failOn) gate(rep *audit.Report) error {
	if f == "" || f == "never" {
		return nil
	}
	n := 0
	for _, fd := range rep.Findings {
		if fd.Severity == compare.SeverityCritical || (f == "warning" && fd.Severity == compare.SeverityWarning) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	what := "finding is"
	if n != 1 {
		what = "findings are"
	}
	return exitWith(exitFindings, fmt.Errorf("%d %s at or above %s (--fail-on %s)", n, what, f, f))
}

// errHelpShown: -h or --help asked for the usage, which is printed; the
// command then exits 0, as "lekta --help" does.
var errHelpShown = errors.New("usage shown")
