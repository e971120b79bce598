package main

import (
	"bytes"
	"errors"
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
//
// What the flag package prints (its message and the usage) is held back:
// -h shows the usage, and a bad flag is the one sentence of the error,
// pointing at the subcommand's --help (usageError).
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	err := parseArgs(fs, args, getenv)
	if held, ok := fs.Output().(*heldOutput); ok {
		if errors.Is(err, flag.ErrHelp) {
			held.flush()
		}
		held.Reset()
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return usageError(fs, err)
	}
	return err
}

// usageError is err, said in one sentence with the subcommand's help:
// "… got \"major\"; see lekta audit --help".
func usageError(fs *flag.FlagSet, err error) error {
	return fmt.Errorf("%w; see lekta %s --help", err, fs.Name())
}

func parseArgs(fs *flag.FlagSet, args []string, getenv func(string) string) error {
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

// newFlagSet returns a FlagSet that reports errors instead of exiting;
// its usage reaches stderr only when asked for (-h), see parseFlags.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&heldOutput{to: stderr})
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fmt.Fprintf(fs.Output(), "\nflags (each also read from LEKTA_<FLAG NAME>):\n")
		fs.PrintDefaults()
	}
	return fs
}

// heldOutput keeps what the flag package prints until parseFlags knows
// whether it was asked for.
type heldOutput struct {
	bytes.Buffer
	to io.Writer
}

func (h *heldOutput) flush() { h.to.Write(h.Bytes()) }
