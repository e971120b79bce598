// Package audit runs one audit: validate the target, consult the cache and
// the per-host limiter, read robots.txt, run the plain lane and then the
// render lane, extract and diff, and store the report.
package audit

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/plainget"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/render"
)

// Defaults of Config.
const (
	DefaultTimeout = 75 * time.Second
	// plainShare caps the plain lane's part of the deadline so a slow site
	// still leaves the render lane time of its own.
	plainShare = 0.4
	maxPlain   = 30 * time.Second
)

// Renderer is the render lane as the pipeline uses it; *render.Browser implements it.
type Renderer interface {
	Render(ctx context.Context, req render.Request) (*compare.Snapshot, error)
	UserAgent() string
}

// Config holds what an Auditor needs.
type Config struct {
	Guard    *policy.Guard
	Renderer Renderer
	// Store holds limits, cache and reports; nil means a fresh in-memory
	// store with the default limits.
	Store cache.Store
	// Identity of the bot.
	Token   string
	PlainUA string
	Timeout time.Duration
	MaxBody int64
	Now     func() time.Time
	NewID   func() string
	Logger  *slog.Logger
}

// Auditor runs audits; it is safe for concurrent use.
type Auditor struct {
	cfg Config
}

// Request asks for one audit.
type Request struct {
	URL     string
	Trigger Trigger
	// ID, when set, is the report id to use (the server makes it before queueing).
	ID string
}

// New returns an Auditor; Guard and Renderer are required.
func New(cfg Config) (*Auditor, error) {
	if cfg.Guard == nil || cfg.Renderer == nil {
		return nil, errors.New("audit: Guard and Renderer are required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = NewID
	}
	if cfg.Store == nil {
		lim := cache.Defaults()
		lim.LeaseTTL = cfg.Timeout + 15*time.Second
		s, err := cache.NewMemoryStore(lim, cfg.Now)
		if err != nil {
			return nil, err
		}
		cfg.Store = s
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Auditor{cfg: cfg}, nil
}

// NewID returns an unguessable report id (130 random bits, base32).
func NewID() string { return rand.Text() }

// Audit is Submit then Finish: the whole pipeline for req. An error means
// no report exists: the target was invalid or refused (policy.ErrInvalidURL,
// policy.ErrTargetRefused) or the shared store was unavailable
// (ErrUnavailable). Every other outcome, rate limits, timeouts and failed
// lanes included, is a Report.
func (a *Auditor) Audit(ctx context.Context, req Request) (*Report, error) {
	t, err := a.Submit(ctx, req)
	if err != nil {
		return nil, err
	}
	return a.Finish(ctx, t)
}

// run audits target under the hard deadline.
func (a *Auditor) run(ctx context.Context, target *url.URL, id string, trigger Trigger) *Report {
	start := a.cfg.Now()
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	r := &Report{
		Schema: Schema, ID: id, URL: target.String(), Trigger: trigger,
		StartedAt: start.UTC(), Agent: a.cfg.Token,
		Findings: []compare.Finding{}, Diff: []compare.FieldDiff{},
	}
	plain := a.plainLane(ctx, target, &r.Lanes.Plain)
	rendered := a.renderLane(ctx, target, &r.Lanes.Render)
	a.finish(r, plain, rendered)
	r.DurationMS = a.cfg.Now().Sub(start).Milliseconds()
	a.cfg.Logger.Info("audit", "id", id, "host", target.Hostname(), "trigger", trigger,
		"status", r.Status, "plain_ms", r.Lanes.Plain.DurationMS, "render_ms", r.Lanes.Render.DurationMS)
	return r
}

// plainLane runs the plain GET with its share of the deadline.
func (a *Auditor) plainLane(ctx context.Context, target *url.URL, lr *LaneReport) *compare.Observed {
	lr.UserAgent = a.cfg.PlainUA
	share := time.Duration(float64(remaining(ctx, a.cfg.Timeout)) * plainShare)
	ctx, cancel := context.WithTimeout(ctx, min(share, maxPlain))
	defer cancel()
	cfg := plainget.Config{
		Transport: a.cfg.Guard.Transport(),
		UserAgent: a.cfg.PlainUA,
		MaxBody:   a.cfg.MaxBody,
		CheckHop:  func(_ context.Context, u *url.URL) error { return a.cfg.Guard.CheckURL(u) },
		Now:       a.cfg.Now,
	}
	snap, err := plainget.Fetch(ctx, cfg, target)
	fillLane(lr, snap, err, ctx)
	return observe(snap, err)
}

// renderLane renders target with whatever remains of the deadline.
func (a *Auditor) renderLane(ctx context.Context, target *url.URL, lr *RenderLaneReport) *compare.Observed {
	lr.UserAgent = a.cfg.Renderer.UserAgent()
	lr.BlockedRequests = map[string]int{}
	if ctx.Err() != nil {
		lr.Outcome, lr.Error = OutcomeTimeout, "the deadline passed before the render lane started"
		return nil
	}
	snap, err := a.cfg.Renderer.Render(ctx, render.Request{URL: target.String()})
	fillLane(&lr.LaneReport, snap, err, ctx)
	if snap != nil && snap.Render != nil {
		d := snap.Render
		if d.Blocked != nil {
			lr.BlockedRequests = d.Blocked
		}
		// Events arrive in network order; the report lists them sorted.
		lr.BlockedURLs = slices.SortedFunc(slices.Values(d.BlockedURLs), func(a, b compare.BlockedRequest) int {
			return cmp.Or(cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.URL, b.URL))
		})
		lr.ConsoleErrors, lr.Exceptions = d.ConsoleErrors, d.Exceptions
		lr.FailedRequests, lr.Requests, lr.Settled = d.FailedRequests, d.Requests, d.Settled
	}
	return observe(snap, err)
}

// remaining is the time left before ctx's deadline, or def without one.
func remaining(ctx context.Context, def time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl)
	}
	return def
}

// observe extracts the page when the lane produced an HTML document.
func observe(snap *compare.Snapshot, err error) *compare.Observed {
	if err != nil || snap == nil || !isHTML(snap.ContentType) {
		return nil
	}
	return &compare.Observed{Snapshot: snap, Page: compare.Extract(snap)}
}

func isHTML(mt string) bool {
	return mt == "" || mt == "text/html" || mt == "application/xhtml+xml"
}

// fillLane copies a lane's snapshot and error into its report.
func fillLane(lr *LaneReport, snap *compare.Snapshot, err error, ctx context.Context) {
	lr.Outcome = OutcomeOK
	if err != nil {
		lr.Outcome, lr.Error = classify(ctx, err), err.Error()
	}
	if snap == nil {
		return
	}
	lr.HTTPStatus, lr.FinalURL, lr.ContentType = snap.Status, snap.FinalURL, snap.ContentType
	lr.Bytes, lr.Truncated, lr.Headers = snap.Bytes, snap.Truncated, reported(snap.Header)
	lr.Redirects = snap.Redirects
	if lr.Redirects == nil {
		lr.Redirects = []compare.Redirect{}
	}
	lr.TTFBMS, lr.DurationMS = snap.Timings.TTFB.Milliseconds(), snap.Timings.Total.Milliseconds()
	if snap.UserAgent != "" {
		lr.UserAgent = snap.UserAgent
	}
}

// reportedHeaders are the response headers a report shows: the ones that
// change how crawlers index or cache the page.
var reportedHeaders = []string{
	"Content-Type", "Content-Length", "Content-Encoding", "Content-Language",
	"X-Robots-Tag", "Link", "Last-Modified", "Etag", "Refresh", "Cache-Control", "Vary",
}

func reported(h compare.Header) compare.Header {
	out := compare.Header{}
	for _, k := range reportedHeaders {
		if v := h.Values(k); len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

// classify names a lane error's outcome.
func classify(ctx context.Context, err error) Outcome {
	switch {
	case errors.Is(err, context.DeadlineExceeded), ctx.Err() != nil:
		return OutcomeTimeout
	case errors.Is(err, policy.ErrBlockedAddress), errors.Is(err, policy.ErrTargetRefused),
		errors.Is(err, plainget.ErrHopRefused):
		return OutcomeBlocked
	}
	return OutcomeError
}

// finish diffs the lanes and sets the report's status, verdict and findings.
func (a *Auditor) finish(r *Report, plain, rendered *compare.Observed) {
	if plain != nil {
		r.Lanes.Plain.Page = plain.Page
	}
	if rendered != nil {
		r.Lanes.Render.Page = rendered.Page
	}
	r.Status, r.Reason = status(r.Lanes.Plain.Outcome, r.Lanes.Render.Outcome)
	if plain != nil || rendered != nil {
		res := compare.Diff(plain, rendered)
		r.Diff, r.Findings = res.Diff, res.Findings
		if plain != nil && rendered != nil {
			r.Verdict = &res.Verdict
		}
	}
	r.Findings = append(laneFindings(r), r.Findings...)
}

// status derives the audit status from the two lane outcomes.
func status(plain, rendered Outcome) (Status, string) {
	switch {
	case plain == OutcomeOK && rendered == OutcomeOK:
		return StatusComplete, ""
	case plain == OutcomeOK || rendered == OutcomeOK:
		return StatusPartial, "only one lane finished"
	case plain == OutcomeTimeout || rendered == OutcomeTimeout:
		return StatusTimeout, "the hard deadline passed before any lane finished"
	case plain == OutcomeBlocked && rendered == OutcomeBlocked:
		return StatusBlocked, "the page's address was refused by the SSRF guard"
	}
	return StatusError, "neither lane could fetch the page"
}

// laneFindings reports lanes that did not finish.
func laneFindings(r *Report) []compare.Finding {
	var out []compare.Finding
	for _, l := range []struct {
		lane compare.Lane
		lr   *LaneReport
	}{{compare.LanePlain, &r.Lanes.Plain}, {compare.LaneRender, &r.Lanes.Render.LaneReport}} {
		if l.lr.Outcome == OutcomeOK {
			continue
		}
		out = append(out, compare.Finding{
			Code:     fmt.Sprintf("lane.%s", l.lr.Outcome),
			Severity: compare.SeverityWarning,
			Message:  fmt.Sprintf("The %s lane did not finish (%s): %s", l.lane, l.lr.Outcome, l.lr.Error),
			Lane:     l.lane,
		})
	}
	return out
}
