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
	"net/http"
	"net/url"
	"slices"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/plainget"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/render"
	"lekta.dev/lekta/verify"
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

// warmer is a render lane that can get ready (start its browser) while
// robots.txt and the plain lane run, so a cold audit does not wait for
// Chromium's start after them.
type warmer interface {
	Warm()
}

// Config holds what an Auditor needs.
type Config struct {
	Guard    *policy.Guard
	Renderer Renderer
	// Store holds limits, cache and reports (cache.SQLiteStore or
	// cache.RedisStore); nil means a fresh in-memory store with the default
	// limits, for tests.
	Store cache.Store
	// LeaseTTL is the Store's Limits.LeaseTTL: a running audit renews its
	// lease every Heartbeat (LeaseTTL/3 when zero) and stops when it lost
	// it or two renewals in a row failed. Default cache.Defaults().LeaseTTL.
	LeaseTTL  time.Duration
	Heartbeat time.Duration
	// Identity of the bot.
	Token   string
	PlainUA string
	Timeout time.Duration
	MaxBody int64
	Now     func() time.Time
	NewID   func() string
	Logger  *slog.Logger
	// Requests keeps a record of every request the audit sends to the site
	// (robots.txt, plain-lane hops, render-lane requests that left), for
	// site operators' verification; nil keeps none (--request-records-ttl 0).
	Requests RequestWriter
	// QueuedKeep, when longer than cache.ProgressTTL, is how long a queued
	// audit's progress entry lives: for instances that share the store but
	// not the queue (Redis without PostgreSQL), so that another instance
	// answers its id while the instance that queued it is stopped.
	QueuedKeep time.Duration
}

// Auditor runs audits; it is safe for concurrent use.
type Auditor struct {
	cfg      Config
	leaseTTL time.Duration
	beat     time.Duration
}

// Request asks for one audit.
type Request struct {
	URL     string
	Trigger Trigger
	// ID, when set, is the report id to use (the server makes it before queueing).
	ID string
	// Start admits the audit at Submit, charging the host's windows then:
	// for a caller that runs it at once (the CLI). Without it Submit
	// reserves a start for a queued audit, and Run admits it when it
	// really starts.
	Start bool
	// Within is the longest wait for a queued audit's start its submitter
	// accepts (Submit without Start): a later start is refused as rate
	// limited. Zero: the hard limit plus a minute.
	Within time.Duration
	// OnStart, when set, is called by Run just before the admission, and so
	// before any request to the site (a queue records there that the audit
	// starts, so that a job whose instance died is never run twice). An
	// error ends Run with that error, nothing admitted or fetched.
	OnStart func(ctx context.Context) error
	// Validators and Previous make the plain lane a conditional GET (the
	// scheduler sets them on a scheduled re-audit): the validators of the
	// previous plain response are sent, and a 304 answer reuses Previous,
	// that response's plain lane (derived fields only). Validators are not
	// sent without Previous.
	Validators plainget.Validators
	Previous   *LaneReport
	// Unkept makes Run store nothing when it did not audit: a URL that a
	// fresh cached result answers comes back as that result under no id
	// of its own, a joined audit's report is not kept under req.ID. For a
	// scheduled re-audit, which is then put off, not recorded.
	Unkept bool
	// NoJoin makes Run answer *NotYet, not the running audit's report, when
	// the same URL's audit is running (a re-audit is a fetch of its own,
	// and never waits on an audit whose instance may have died).
	NoJoin bool
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
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = cache.Defaults().LeaseTTL
	}
	if cfg.Store == nil {
		lim := cache.Defaults()
		lim.LeaseTTL = cfg.LeaseTTL
		s, err := cache.NewMemoryStore(lim, cfg.Now)
		if err != nil {
			return nil, err
		}
		cfg.Store = s
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	beat := cfg.Heartbeat
	if beat <= 0 {
		beat = cfg.LeaseTTL / 3
	}
	return &Auditor{cfg: cfg, leaseTTL: cfg.LeaseTTL, beat: beat}, nil
}

// NewID returns an unguessable report id (130 random bits, base32).
func NewID() string { return rand.Text() }

// Audit is Submit then Finish: the whole pipeline for req. An error means
// no report exists: the target was invalid or refused (policy.ErrInvalidURL,
// policy.ErrTargetRefused) or the shared store was unavailable
// (ErrUnavailable). Every other outcome, rate limits, timeouts and failed
// lanes included, is a Report.
func (a *Auditor) Audit(ctx context.Context, req Request) (*Report, error) {
	req.Start = true // run at once: one decision
	t, err := a.Submit(ctx, req)
	if err != nil {
		return nil, err
	}
	return a.Finish(ctx, t)
}

// run audits target under the hard deadline, reporting each step to t.
func (a *Auditor) run(ctx context.Context, t *Ticket) *Report {
	target, id, trigger := t.target, t.ID, t.Trigger
	start := a.cfg.Now()
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	r := &Report{
		Schema: Schema, ID: id, URL: target.String(), Trigger: trigger,
		StartedAt: At(start.UTC()), Agent: a.cfg.Token,
		Findings: []compare.Finding{}, Diff: []compare.FieldDiff{},
	}
	r.Lanes.Plain.UserAgent, r.Lanes.Render.UserAgent = a.cfg.PlainUA, a.cfg.Renderer.UserAgent()
	// One transport serves robots.txt and the plain lane of this audit; its
	// keep-alive connections to the site are closed when the audit ends.
	if w, ok := a.cfg.Renderer.(warmer); ok {
		w.Warm()
	}
	reqs := newRequestLog(a.cfg.Requests, id, a.cfg.Now, a.cfg.Logger)
	defer reqs.close()
	tr := a.cfg.Guard.Transport()
	defer tr.CloseIdleConnections()
	book := newRobotsBook(a, reqs.transportFor(tr, verify.LaneRobots))
	a.stepOnce(t, StepRobots)
	var cmp *compare.Verdict
	compared := false
	page, ok := a.robotsAllow(ctx, book, target, r)
	t.contacted = a.cfg.Now() // the site has seen robots.txt's request, if any
	if ok {
		a.step(t, StepPlain)
		plain := a.plainLane(ctx, target, reqs.transportFor(tr, verify.LanePlain), book, t.cond, &r.Lanes.Plain)
		a.step(t, StepRender)
		rendered := a.renderLane(ctx, target, book, page, reqs, &r.Lanes.Render, laneClock(plain))
		a.step(t, StepCompare)
		cmp = a.finish(r, plain, rendered)
		compared = plain != nil && rendered != nil
		r.Crawlers = crawlerRows(book.result(ctx, target), target, plain, rendered)
	}
	v := compare.Conclude(r.Findings, cmp, compared, r.Crawlers)
	r.Verdict = &v
	r.DurationMS = a.cfg.Now().Sub(start).Milliseconds()
	r.fillEmpty()
	a.cfg.Logger.Info("audit", "id", id, "host", target.Hostname(), "trigger", trigger,
		"status", r.Status, "plain_ms", r.Lanes.Plain.DurationMS, "render_ms", r.Lanes.Render.DurationMS)
	return r
}

// robotsAllow reads the origin's robots.txt into the report and says
// whether the lanes may run, with the decision on the page. A site that
// cannot be reached at all is reported as such (no robots.txt decision was
// made); an unreachable robots.txt skips the audit; a disallow skips a
// scheduled re-audit, while an audit a person asked for runs as a
// user-triggered fetch with the block noted.
func (a *Auditor) robotsAllow(ctx context.Context, book *robotsBook, target *url.URL, r *Report) (policy.Decision, bool) {
	res := book.result(ctx, target)
	d, err := res.DecideURL(a.cfg.Token, target)
	sec := policy.NewRobotsReport(res, d)
	r.Robots = &sec
	// Messages quote the rule as the report shows it, control bytes escaped.
	shown := d
	shown.Rule, shown.Group = sec.Rule, sec.Group
	if f, ok := unreachableSite(res, target); ok {
		siteUnreachable(r, f)
		return d, false
	}
	if res.Outcome == policy.RobotsUnreachable && errors.Is(res.Err, policy.ErrBlockedAddress) {
		targetBlocked(r, res.Err)
		return d, false
	}
	switch {
	case err != nil:
		r.Reason = "robots.txt could not be read, so nothing was fetched: " + res.Reason
		r.Findings = append(r.Findings, finding(compare.CodeRobotsUnreachable, compare.SeverityWarning,
			"robots.txt could not be read (%s), so LektaBot treats the site as off limits (RFC 9309) and fetched nothing else; it will not retry.",
			res.Reason))
	case !d.Allowed && r.Trigger == TriggerScheduled:
		r.Reason = fmt.Sprintf("robots.txt disallows this URL for %s (%s), so the scheduled re-audit was skipped", a.cfg.Token, shown.Rule)
		r.Findings = append(r.Findings, finding(compare.CodeRobotsDisallowed, compare.SeverityCritical,
			"%s", disallowMessage(a.cfg.Token, shown, res, target, false)))
	case !d.Allowed:
		r.Findings = append(r.Findings, finding(compare.CodeRobotsDisallowed, compare.SeverityCritical,
			"%s", disallowMessage(a.cfg.Token, shown, res, target, true)))
		return d, true
	default:
		return d, true
	}
	r.Status = StatusSkipped
	r.Lanes.Plain.Outcome, r.Lanes.Render.Outcome = OutcomeSkipped, OutcomeSkipped
	return d, false
}

// plainLane runs the plain GET with its share of the deadline, a
// conditional one when cond has a previous response to reuse.
func (a *Auditor) plainLane(ctx context.Context, target *url.URL, tr http.RoundTripper, book *robotsBook, cond conditional, lr *LaneReport) *compare.Observed {
	share := time.Duration(float64(remaining(ctx, a.cfg.Timeout)) * plainShare)
	ctx, cancel := context.WithTimeout(ctx, min(share, maxPlain))
	defer cancel()
	cfg := plainget.Config{
		Transport: tr,
		UserAgent: a.cfg.PlainUA,
		MaxBody:   a.cfg.MaxBody,
		CheckHop: func(ctx context.Context, u *url.URL) error {
			if err := a.cfg.Guard.CheckURL(u); err != nil {
				return err
			}
			return book.check(ctx, u)
		},
		Now: a.cfg.Now,
	}
	if cond.previous != nil {
		cfg.Validators = cond.validators
	}
	start := a.cfg.Now()
	snap, err := plainget.Fetch(ctx, cfg, target)
	fillLane(ctx, lr, snap, err, a.cfg.Now().Sub(start))
	if err == nil && snap.Status == http.StatusNotModified && cond.previous != nil {
		return cond.reuse(snap, lr)
	}
	return a.observe(snap, err, time.Time{})
}

// laneClock is the clock of a lane's response (compare.Snapshot.Clock),
// zero without one.
func laneClock(o *compare.Observed) time.Time {
	if o == nil {
		return time.Time{}
	}
	return o.Snapshot.Clock()
}

// renderLane renders target with whatever remains of the deadline. page
// is robots.txt's decision on target: when it disallows the page (which
// runs only because a person asked for it), the page's own same-origin
// subresources that the same rule disallows are part of that one
// user-triggered fetch and are loaded; those another rule disallows stay
// blocked, as every disallowed subresource of an allowed page does. clock,
// when not zero, is the plain lane's: the rendered page's unavailable_after
// dates are judged by the same time as the server HTML's.
func (a *Auditor) renderLane(ctx context.Context, target *url.URL, book *robotsBook, page policy.Decision, reqs *requestLog, lr *RenderLaneReport, clock time.Time) *compare.Observed {
	if ctx.Err() != nil {
		lr.Outcome, lr.Error, lr.CutByDeadline = OutcomeTimeout, "the deadline passed before the render lane started", true
		return nil
	}
	var sent func(render.Sent)
	if reqs != nil {
		sent = reqs.sent
	}
	start := a.cfg.Now()
	snap, err := a.cfg.Renderer.Render(ctx, render.Request{
		URL:  target.String(),
		Sent: sent,
		// The page itself was decided above; everything else of its origin
		// is asked about, so a disallowed script is never fetched. The
		// render proxy asks here for every same-origin request, workers'
		// included, so this is where the decision is made.
		AllowSameOrigin: func(u *url.URL) (bool, string) {
			if samePage(u, target) {
				return true, ""
			}
			d, err := book.decide(ctx, u)
			if err != nil {
				return false, "robots.txt unreachable"
			}
			if !d.Allowed && !page.Allowed && sameRule(d, page) && sameOrigin(u, target) {
				return true, ""
			}
			return d.Allowed, d.Rule
		},
		// Main-frame hops and navigations to any origin follow that
		// origin's robots.txt, as the plain lane's redirect hops do.
		CheckNavigation: func(u *url.URL) error {
			if samePage(u, target) {
				return nil
			}
			return book.check(ctx, u)
		},
	})
	fillLane(ctx, &lr.LaneReport, snap, err, a.cfg.Now().Sub(start))
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
		lr.CookiesRefused, lr.CredentialsRefused = d.CookiesRefused, d.CredentialsRefused
		lr.RefusedFeatures, lr.SourceMaps = d.RefusedFeatures, d.SourceMaps
		lr.SettledBy, lr.PageTimeMS, lr.PendingRequests = d.SettledBy, d.PageTime.Milliseconds(), d.PendingRequests
		lr.Timing = renderTiming(d.Timing, d.PageTime)
	}
	return a.observe(snap, err, clock)
}

// sameRule reports whether two decisions of one robots.txt were made by
// the same rule of the same group.
func sameRule(a, b policy.Decision) bool {
	return a.Line == b.Line && a.Group == b.Group && a.Rule == b.Rule
}

// sameOrigin reports whether u has target's scheme and host.
func sameOrigin(u, target *url.URL) bool {
	return u.Scheme == target.Scheme && u.Host == target.Host
}

// samePage reports whether u is the audited page itself (fragment aside).
func samePage(u, target *url.URL) bool {
	return u.Scheme == target.Scheme && u.Host == target.Host && policy.RequestTarget(u) == policy.RequestTarget(target)
}

// remaining is the time left before ctx's deadline, or def without one.
func remaining(ctx context.Context, def time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl)
	}
	return def
}
