package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/render"
)

const auditUsage = `usage: lekta audit [flags] URL

Fetches URL twice as LektaBot (a plain GET without JavaScript, then a
headless-Chromium render) and prints what the plain fetch misses.

An address without a scheme (example.com/page) is taken as https://, as a
browser's address bar does. While the audit runs, the current step and the
elapsed time are shown on stderr when stderr is a terminal.

exit status: 0 the audit ran (complete or partial), 2 bad input (malformed
URL, not http(s), refused target), 3 the audit could not run (skipped,
rate-limited, browser missing, timeout before any lane finished, store down;
also when the audit ran but the store failed before its report was kept:
the report is still printed), 4 the audit ran and has a finding at or above
--fail-on.
`

// runAudit is "lekta audit".
func runAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg := config{getenv: getenv}
	fs := newFlagSet("audit", auditUsage, stderr)
	cfg.register(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON (schema "+audit.Schema+")")
	gate := registerFailOn(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return exitWith(exitBadInput, flagError(err))
	}
	if fs.NArg() != 1 {
		return exitWith(exitBadInput, usageError(fs, errors.New("audit takes exactly one URL")))
	}
	target := policy.WithDefaultScheme(fs.Arg(0))
	guard, _, err := cfg.validate()
	if err != nil {
		return exitWith(exitBadInput, err)
	}
	// Refuse bad input before opening the store or starting a browser.
	if _, err := guard.ParseTarget(target); err != nil {
		return exitWith(exitBadInput, err)
	}
	// A missing browser is a setup error, reported before the store counts an audit.
	if _, err := render.FindBrowser(cfg.chromium); err != nil {
		return exitWith(exitNotRun, err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// One render at most: no spare browser context competing for the CPU,
	// and the browser closes once its page is read, while the audit
	// compares and stores. It starts only once the store has said that
	// this process runs the audit: a cached, joined or refused answer
	// needs no browser, even on a data dir another process is making.
	cfg.oneRender = true
	p, err := cfg.open(ctx, logger)
	if err != nil {
		return exitWith(exitFor(err), err)
	}
	defer p.Close()
	prog := startProgress(stderr)
	rep, err := auditOnce(ctx, p, target, stderr, logger, prog.step)
	prog.stop()
	if err != nil && rep == nil {
		return exitWith(auditErrorCode(err), err)
	}
	if perr := printReport(stdout, rep, *asJSON); perr != nil {
		return exitWith(exitNotRun, perr)
	}
	if err != nil {
		// The audit ran, then the store failed: show the report anyway, since
		// the site was contacted, but say that it may not be cached or kept.
		return exitWith(exitNotRun, err)
	}
	if rep.Status.NotRun() {
		return exitWith(exitNotRun, fmt.Errorf("not run (%s): %s", rep.Status.Words(), rep.Reason))
	}
	if !rep.Status.Ran() {
		return exitWith(exitNotRun, fmt.Errorf("the audit did not run to the end (%s): %s", rep.Status.Words(), rep.Reason))
	}
	return gate.gate(rep)
}

// auditOnce asks the store first and starts Chromium only when this
// process must run the audit: a cached, joined or refused answer needs no
// browser. The browser starts while robots.txt and the plain lane run
// (audit asks the render lane to warm up); one that fails to start makes
// the render lane fail, and the audit still ends so that the lease is
// released and the report stored. A process that ran an audit then sweeps
// expired rows, so that a machine that only runs the CLI keeps its
// database small too.
func auditOnce(ctx context.Context, p *parts, rawURL string, stderr io.Writer, logger *slog.Logger, onStep func(audit.Step)) (*audit.Report, error) {
	t, err := p.auditor.Submit(ctx, audit.Request{URL: rawURL, Trigger: audit.TriggerCLI, Start: true})
	if err != nil {
		return nil, err
	}
	t.Watch(onStep)
	switch {
	case t.Joined():
		fmt.Fprintf(stderr, "lekta: this URL is being audited already; waiting for that audit (report %s)\n", t.ID)
	case t.Ready() == nil:
		defer p.sweep.once(context.WithoutCancel(ctx))
	}
	return p.auditor.Finish(ctx, t)
}

// auditErrorCode maps an error of Auditor.Audit to an exit status.
func auditErrorCode(err error) int {
	if errors.Is(err, policy.ErrInvalidURL) || errors.Is(err, policy.ErrTargetRefused) {
		return exitBadInput
	}
	return exitNotRun
}

func printReport(w io.Writer, rep *audit.Report, asJSON bool) error {
	if !asJSON {
		return audit.WriteText(w, rep)
	}
	b, err := rep.Encode()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// flagError keeps flag's own message; -h is no error: the usage is
// shown and the command exits 0.
func flagError(err error) error {
	if errors.Is(err, errHelp) {
		return errHelpShown
	}
	return err
}
