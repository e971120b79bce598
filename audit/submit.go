package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/compare"
)

// Errors of Submit and Finish that are not reports.
var (
	// ErrUnavailable: the store (hot state or records database) did not
	// answer, or cannot record a report now; no audit started
	// (CLI exit 3, API 503 with Retry-After). It wraps cache.ErrUnavailable.
	ErrUnavailable = fmt.Errorf("audit refused: %w", cache.ErrUnavailable)
	// ErrNotStored: the audit ran and Finish returns its report, but the
	// store failed while keeping it, through retries for the lease's
	// lifetime, so it is not cached and may not be readable by id (the
	// archive may have kept it). The lease then lapses within its TTL and
	// joiners get cache.ErrAbandoned. It wraps cache.ErrUnavailable, not
	// ErrUnavailable.
	ErrNotStored = fmt.Errorf("the audit ran, but storing its report failed: %w", cache.ErrUnavailable)
	// ErrNotFound: no report has that id (or it expired).
	ErrNotFound = cache.ErrNotFound
)

// storeTimeout bounds each store call after an audit, whose own context may
// have run out: storing the result and releasing the lease must still happen.
const storeTimeout = 5 * time.Second

// Ticket is a submitted audit: either already answered (a cached or
// rate-limited report, Ready) or waiting to be run or joined by Finish.
type Ticket struct {
	// ID is the report id the audit is stored under.
	ID      string
	URL     string
	Trigger Trigger
	target  *url.URL
	ready   *Report
	lease   *cache.Lease
	onStep  func(Step)
	// joined is set when the same URL is already running under ID.
	joined bool
	// StartsAt is set when Submit reserved a start for a queued audit: the
	// caller queues it for then and calls Run with the same id.
	StartsAt time.Time
	// Limit is set when that start is later than now: the per-host limit
	// that put it off ("concurrency", "1/1m"); WaitReason says it in words.
	Limit string
	done  bool
	// onStart is Request.OnStart.
	onStart func(ctx context.Context) error
	// stored is the step last written to the shared store.
	stored Step
	// cond is the request's conditional re-fetch, if any.
	cond conditional
	// admitting is when the admission that let the audit run was asked
	// for; contacted is when its first request to the site had surely
	// reached it (robots.txt answered or failed). Zero until then.
	admitting, contacted time.Time
}

// contactDelay is cache.Outcome.Contacted: how long after its admission
// the site had seen the audit's first request.
func (t *Ticket) contactDelay() time.Duration {
	if t.admitting.IsZero() || t.contacted.IsZero() {
		return 0
	}
	return max(t.contacted.Sub(t.admitting), 0)
}

// Ready returns the report when the ticket was answered at once (from the
// cache, or refused by the limiter), else nil.
func (t *Ticket) Ready() *Report { return t.ready }

// Joined reports whether Finish will wait for an audit already running.
func (t *Ticket) Joined() bool { return t.joined }

// Reserved reports whether Submit reserved a start for a queued audit
// (Ticket.StartsAt): the caller queues it and Run starts it.
func (t *Ticket) Reserved() bool { return !t.StartsAt.IsZero() }

// Submit validates the target and asks the store for a decision, without
// contacting the site: a cached report and a rate-limited refusal come back
// Ready; a URL already running comes back Joined. With req.Start the
// decision is the one atomic admission (the command line runs the audit at
// once, with Finish); otherwise it is a reservation for a queued audit
// (req.Within bounds the wait for its start), charged nothing until Run
// admits it: the ticket is Reserved with the start it was promised, or
// Ready with a rate-limited report when that start is further away than
// req.Within. Errors: policy.ErrInvalidURL, policy.ErrTargetRefused,
// ErrUnavailable.
func (a *Auditor) Submit(ctx context.Context, req Request) (*Ticket, error) {
	t, err := a.ticket(req)
	if err != nil {
		return nil, err
	}
	// Admit and Reserve answer a fresh cached result first, without
	// charging the limiter, so one store round trip decides every
	// submission.
	var adm cache.Admission
	if req.Start {
		t.admitting = a.cfg.Now()
		adm, err = a.cfg.Store.Admit(ctx, t.URL, t.ID)
	} else {
		adm, err = a.cfg.Store.Reserve(ctx, t.URL, t.ID, cmp.Or(req.Within, a.cfg.Timeout+time.Minute))
	}
	if err != nil {
		return nil, unavailable(err)
	}
	switch adm.Decision {
	case cache.Cached:
		t.ready, err = a.answerCached(ctx, t.ID, adm.Entry)
	case cache.InFlight:
		t.ID, t.joined = adm.RunningID, true
	case cache.Refused:
		t.ready = a.refusedReport(t, adm)
	case cache.Admitted:
		t.lease = &adm.Lease
	case cache.Reserved:
		t.StartsAt, t.Limit = adm.StartsAt, adm.Reason
	default:
		err = fmt.Errorf("submit: store answered %v", adm.Decision)
	}
	return t, err
}

// ticket validates req's target and makes its ticket.
func (a *Auditor) ticket(req Request) (*Ticket, error) {
	target, err := a.cfg.Guard.ParseTarget(req.URL)
	if err != nil {
		return nil, err
	}
	t := &Ticket{ID: req.ID, URL: target.String(), Trigger: req.Trigger, target: target,
		cond: conditional{validators: req.Validators, previous: req.Previous}, onStart: req.OnStart}
	if t.ID == "" {
		t.ID = a.cfg.NewID()
	}
	return t, nil
}

// Unreserve gives back the start Submit reserved for t, whose audit could
// not be queued; a start another submission of the URL reserved stays.
func (a *Auditor) Unreserve(ctx context.Context, t *Ticket) error {
	if err := a.cfg.Store.Unreserve(ctx, t.URL, t.ID); err != nil {
		return unavailable(err)
	}
	return nil
}

// Run starts a queued audit (req.ID is its id, which its submitter holds):
// the one atomic admission, consuming its reservation, then the audit under
// the hard deadline, stored under its id. A URL cached or running by then
// is answered from the cache or joined and kept under the id too. Errors:
// *NotYet when the limits (or a cancellation with a *CancelError before it
// started) say wait; ErrUnavailable when the store failed before the
// audit; ErrNotStored (with the report) when it failed after;
// cache.ErrAbandoned when a joined audit ended without a result.
func (a *Auditor) Run(ctx context.Context, req Request) (*Report, error) {
	t, err := a.ticket(req)
	if err != nil {
		return nil, err
	}
	if reason, ok := cancelReason(ctx); ok {
		return nil, &NotYet{Until: a.cfg.Now(), Reason: reason, Sentence: reason}
	}
	// Everything that may take a while happens before the admission, so
	// that the start the windows count is when the first request leaves:
	// the queue's record that the audit starts, and the progress entry.
	if err := a.started(ctx, t); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	a.stepStored(t, StepRobots)
	t.admitting = a.cfg.Now()
	adm, err := a.cfg.Store.Admit(ctx, t.URL, t.ID)
	if err != nil {
		return nil, unavailable(err)
	}
	var r *Report
	switch adm.Decision {
	case cache.Admitted:
		return a.runHeld(ctx, t, adm.Lease)
	case cache.Cached: // under the ticket's id, by a reference
		defer a.dropProgress(t.ID)
		if req.Unkept {
			adm.Entry.ID = ""
			return cachedReport(adm.Entry)
		}
		return a.answerCached(ctx, t.ID, adm.Entry)
	case cache.InFlight:
		defer a.dropProgress(t.ID)
		if req.NoJoin {
			return nil, &NotYet{Until: a.cfg.Now().Add(inFlightWait), Reason: reasonInFlight, Sentence: sentenceInFlight}
		}
		if r, err = a.join(ctx, t.URL, adm.RunningID); err != nil {
			return nil, err
		}
	case cache.Refused:
		return nil, a.notYet(ctx, t, adm)
	default:
		return nil, fmt.Errorf("run: store answered %v", adm.Decision)
	}
	if !req.Unkept {
		a.keep(t, r)
	}
	return r, nil
}

// Finish returns the ticket's report: the ready one, the joined audit's, or
// the admitted audit's, which it runs under the hard deadline and stores.
// Errors: ErrNotStored (with the report) when the store failed after the
// audit, cache.ErrAbandoned when a joined audit ended without a result,
// and ctx's error.
func (a *Auditor) Finish(ctx context.Context, t *Ticket) (*Report, error) {
	if t.done {
		return nil, errors.New("finish: ticket was already finished")
	}
	t.done = true
	switch {
	case t.ready != nil:
		return t.ready, nil
	case t.joined:
		return a.join(ctx, t.URL, t.ID)
	case t.lease != nil:
		return a.runHeld(ctx, t, *t.lease)
	}
	return nil, errors.New("finish: a reserved ticket is started by Run, not Finish")
}

// join waits for the running audit id of url. A store fault while waiting
// is retried for three lease lifetimes: the holder retries its own store
// calls for one, and a holder that gave up leaves a lease that lapses
// within one more.
func (a *Auditor) join(ctx context.Context, url, id string) (*Report, error) {
	var e cache.Entry
	err := a.retryFor(ctx, 3*a.leaseTTL, 0, "join audit "+id, func(ctx context.Context) error {
		var err error
		e, err = a.cfg.Store.Wait(ctx, url, id)
		return err
	})
	if err != nil {
		if errors.Is(err, cache.ErrUnavailable) {
			return nil, unavailable(err)
		}
		return nil, fmt.Errorf("join audit %s: %w", id, err)
	}
	r, err := Decode(e.Report)
	if err != nil {
		return nil, err
	}
	r.Joined = true
	return r, nil
}

// runHeld runs an admitted audit, its lease renewed by a heartbeat that
// stops the audit if the lease is lost, then stores the report while the
// heartbeat still holds the lease.
func (a *Auditor) runHeld(ctx context.Context, t *Ticket, l cache.Lease) (*Report, error) {
	defer a.dropProgress(t.ID)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hb := a.startHeartbeat(l, cancel)
	start := a.cfg.Now()
	r := a.run(ctx, t)
	if reason, ok := cancelReason(ctx); ok {
		r = a.cancelledReport(t, reason, start)
		r.DurationMS = a.cfg.Now().Sub(start).Milliseconds()
	} else if cause := context.Cause(ctx); errors.Is(cause, errLeaseGone) {
		r.Status = StatusError
		r.Reason = "this instance could not keep its hold on the host (it was paused, or cut off from the shared store, for longer than the hold lasts), so the audit was stopped at once: " + cause.Error()
	}
	err := a.store(l, r, t.contactDelay())
	hb.stop()
	return r, err
}

// started calls the ticket's OnStart, just before the audit's admission
// (and so before any request to the site).
func (a *Auditor) started(ctx context.Context, t *Ticket) error {
	if t.onStart == nil {
		return nil
	}
	return t.onStart(ctx)
}

// cancelledReport is the report of an audit cancelled (before it started,
// or while running) for reason: no findings, no robots section, nothing
// said about the site.
func (a *Auditor) cancelledReport(t *Ticket, reason string, start time.Time) *Report {
	r := &Report{
		Schema: Schema, ID: t.ID, URL: t.URL, Status: StatusCancelled, Trigger: t.Trigger,
		StartedAt: At(start.UTC()), Agent: a.cfg.Token, Reason: reason,
		Findings: []compare.Finding{}, Diff: []compare.FieldDiff{},
	}
	r.Lanes.Plain.Outcome, r.Lanes.Render.Outcome = OutcomeSkipped, OutcomeSkipped
	r.Verdict = &compare.Conclusion{Summary: "The audit was cancelled: " + reason + ".", Severity: compare.SeverityNone}
	r.fillEmpty()
	return r
}

// refusedReport is the report of an audit the limiter refused.
func (a *Auditor) refusedReport(t *Ticket, adm cache.Admission) *Report {
	wait := max(time.Duration(math.Ceil(adm.RetryAfter.Seconds()))*time.Second, time.Second)
	r := &Report{
		Schema: Schema, ID: t.ID, URL: t.URL, Status: StatusRateLimited, Trigger: t.Trigger,
		StartedAt: At(a.cfg.Now().UTC()), Agent: a.cfg.Token, RetryAfterS: int64(wait / time.Second), Limit: adm.Reason,
		Reason:   LimitSentence(t.target.Hostname(), adm.Reason, wait),
		Findings: []compare.Finding{}, Diff: []compare.FieldDiff{},
	}
	r.Lanes.Plain.Outcome, r.Lanes.Render.Outcome = OutcomeSkipped, OutcomeSkipped
	r.Verdict = &compare.Conclusion{Summary: r.Reason, Severity: compare.SeverityNone}
	r.fillEmpty()
	return r
}

// LimitSentence says in words which per-host limit refused an audit of
// host and when to try again: "This host was audited less than a minute
// ago; try again in 42 s." limit is "concurrency" or a window ("5/1h").
func LimitSentence(host, limit string, wait time.Duration) string {
	again := "try again in " + compare.Duration(wait) + "."
	switch limit {
	case cache.ReasonConcurrency:
		return "Another audit of " + host + " is running; " + again
	case cache.ReasonReserved:
		return "This audit's reserved start at " + host + " comes in " + compare.Duration(wait) + "."
	}
	ws, err := cache.ParseWindows(limit)
	if err != nil || len(ws) != 1 {
		return "The per-host limits refused this audit of " + host + "; " + again
	}
	w := ws[0]
	if w.N == 1 {
		return "This host was audited less than " + per(w.Per) + " ago; " + again
	}
	return fmt.Sprintf("This host was audited %d times in the last %s; %s", w.N, strings.TrimPrefix(strings.TrimPrefix(per(w.Per), "an "), "a "), again)
}

// per says a window's length as prose: "a minute", "an hour", "15 min".
func per(d time.Duration) string {
	switch d {
	case time.Minute:
		return "a minute"
	case time.Hour:
		return "an hour"
	case 24 * time.Hour:
		return "a day"
	}
	return compare.Duration(d)
}

func unavailable(err error) error {
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
