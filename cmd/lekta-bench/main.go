// Command lekta-bench is `make bench`'s second half. It runs two lekta
// binaries — today's build and a baseline build of an earlier commit — as
// real `lekta serve` processes against the local test site and measures, in
// one window and interleaved round by round:
//
//   - warm audits of each kind of delayed content (testdata/site/delayed,
//     and a docsify docs site built from -assets, see docsify.go):
//     median audit time of both builds and their ratio, whether each build
//     caught the late content (title and link in the render lane's
//     extract), CPU seconds per audit of the whole server process tree
//     (Chromium included), and why the new build's render stopped;
//   - the same audits as the API's client sees them (POST, then GET
//     ?wait=): its time against the report's duration_ms, the page's own
//     floor and the baseline, and from the POST to the audit's start;
//   - throughput of `lekta serve --renderers 2` on the static page, each
//     build probed meanwhile with single audits (the start and the
//     client's time on a loaded machine), and of `--renderers 1` on the SPA;
//   - a cold `lekta audit` (new process, no Chromium running) against a cold
//     --dump-dom of the same page by the headless shell lekta renders with;
//   - how busy the machine was over the run.
//
// Ratios are the figures that count; absolute times on shared machines drift.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"lekta.dev/lekta/render"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lekta-bench:", err)
		os.Exit(1)
	}
}

// options are the bench's flags.
type options struct {
	base, next string // lekta binaries: baseline and today's
	chromium   string
	rounds     int
	load       int
	cold       int
	assets     string // make bench-assets' directory: docsify
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "store" {
		return runStore(ctx, args[1:], out)
	}
	fs := flag.NewFlagSet("lekta-bench", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.base, "base", "", "lekta binary built from the baseline commit (required)")
	fs.StringVar(&o.next, "new", "bin/lekta", "lekta binary of today's build")
	fs.StringVar(&o.chromium, "chromium", "", "browser binary for the cold dump-dom (default: the one lekta renders with)")
	fs.IntVar(&o.rounds, "n", 10, "warm audits per page and build (after one warm-up)")
	fs.IntVar(&o.load, "load", 60, "audits per throughput run")
	fs.IntVar(&o.cold, "cold", 5, "cold runs of each command (0 skips them)")
	fs.StringVar(&o.assets, "assets", ".bench", "`DIR` that make bench-assets fills with docsify's files")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.base == "" {
		return fmt.Errorf("-base is required (make bench builds it from BENCH_BASE)")
	}
	var err error
	if o.chromium, err = render.FindBrowser(o.chromium); err != nil {
		return err
	}
	start := readMachine()
	b, err := newBench(ctx, o)
	if err != nil {
		return err
	}
	defer b.close()
	if err := b.warm(ctx, out); err != nil {
		return err
	}
	if err := b.throughput(ctx, out); err != nil {
		return err
	}
	if err := b.coldStart(ctx, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%s\n", loadLine(start))
	return nil
}
