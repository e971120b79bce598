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

exit status: 0 the audit ran (complete or partial), 2 bad input (malformed
URL, not http(s), refused target), 3 the audit could not run (skipped,
rate-limited, browser missing, timeout before any lane finished, store down;
also when the audit ran but the store failed before its report was kept:
the report is still printed).
`

// runAudit is "lekta audit".
func runAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg := config{getenv: getenv}
	fs := newFlagSet("audit", auditUsage, stderr)
	cfg.register(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON (schema "+audit.Schema+")")
	if err := parseFlags(fs, args, getenv); err != nil {
		return exitWith(exitBadInput, flagError(err))
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitWith(exitBadInput, errors.New("audit takes exactly one URL"))
	}
	guard, _, err := cfg.validate()
	if err != nil {
		return exitWith(exitBadInput, err)
	}
	// Refuse bad input before opening the store or starting a browser.
	if _, err := guard.ParseTarget(fs.Arg(0)); err != nil {
		return exitWith(exitBadInput, err)
	}
	// A missing browser is a setup error, reported before the store counts an audit.
	if _, err := render.FindBrowser(cfg.chromium); err != nil {
		return exitWith(exitNotRun, err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, err := cfg.open(ctx, logger)
	if err != nil {
		return exitWith(exitFor(err), err)
	}
	defer p.Close()
	rep, err := auditOnce(ctx, p, fs.Arg(0), stderr, logger)
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
	if !rep.Status.Ran() {
		return exitWith(exitNotRun, fmt.Errorf("audit %s: %s", rep.Status, rep.Reason))
	}
	return nil
}

// auditOnce asks the store first and starts Chromium only when this
// process must run the audit: a cached, joined or refused answer needs no
// browser. A browser that fails to start after admission is noted, and
// the audit still runs (its render lane then fails) so that the lease is
// released and the report stored. A process that ran an audit then sweeps
// expired rows, so that a machine that only runs the CLI keeps its
// database small too.
func auditOnce(ctx context.Context, p *parts, rawURL string, stderr io.Writer, logger *slog.Logger) (*audit.Report, error) {
	t, err := p.auditor.Submit(ctx, audit.Request{URL: rawURL, Trigger: audit.TriggerCLI})
	if err != nil {
		return nil, err
	}
	switch {
	case t.Joined():
		fmt.Fprintf(stderr, "lekta: this URL is being audited already; waiting for that audit (report %s)\n", t.ID)
	case t.Ready() == nil:
		if err := p.startBrowser(ctx); err != nil {
			logger.Warn("the render lane will fail", "err", err)
		}
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

// flagError keeps flag's own message; -h is not an error worth a message.
func flagError(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}
