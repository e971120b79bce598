package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// errHelp is flag.ErrHelp: -h asked for usage, which is already printed.
var errHelp = flag.ErrHelp

// listFlag is a repeatable string flag; its environment fallback is comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// envName is the LEKTA_* variable a flag falls back to.
func envName(flagName string) string {
	return "LEKTA_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags parses args, then fills every flag not given on the command
// line from its LEKTA_* environment variable. Errors name the flag or variable.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		// Flags may follow positional arguments: "lekta audit URL --json".
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if err := fs.Parse(append([]string{"--"}, positional...)); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v := getenv(envName(f.Name))
		if set[f.Name] || v == "" || err != nil {
			return
		}
		vals := []string{v}
		if _, repeatable := f.Value.(*listFlag); repeatable {
			vals = strings.Split(v, ",")
		}
		for _, one := range vals {
			if e := fs.Set(f.Name, strings.TrimSpace(one)); e != nil {
				err = fmt.Errorf("%s=%q: %w", envName(f.Name), v, e)
				return
			}
		}
	})
	return err
}

// newFlagSet returns a FlagSet that reports errors instead of exiting.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fmt.Fprintf(stderr, "\nflags (each also read from LEKTA_<FLAG NAME>):\n")
		fs.PrintDefaults()
	}
	return fs
}
