package render

import (
	"context"
	"errors"
	"math"
	"time"
)

// The completeness rule. A render ends when the page has no more work to
// do within its budget of page time, not after a fixed wait:
//
//   - page time is virtual (Emulation.setVirtualTimePolicy with
//     pauseIfNetworkFetchesPending): it stands still while any request is in
//     flight and otherwise jumps straight to the next timer, so a setTimeout
//     of 4 s costs no wall time, a fetch() chain is waited for, and Date.now
//     and performance.now still move forward;
//   - a script installed at document start (pageStateJS) keeps count of what
//     the page has scheduled: timeouts and when they fall due, intervals,
//     animation frames, idle callbacks (run within 50 ms of page time when
//     the browser finds no idle period), observers waiting for their first
//     notification, and the messages and tasks the page posts to itself
//     (MessageChannel, postMessage, scheduler.postTask: how React's
//     scheduler yields);
//   - the viewport is tall, so sections that appear when scrolled into view
//     are in view without scrolling;
//   - after each grant of page time the page renders a frame when anything
//     changed, so layout-triggered callbacks (IntersectionObserver, lazy
//     loading) run, and then the rule is checked again.
//
// The page is idle when nothing is in flight and nothing is scheduled within
// the budget; it ran out of budget when work remains at the end of it. A
// page that looks idle at its load event is done only once a message
// posted after its own has come through with nothing new done, posted or
// requested (idleAtLoad); otherwise page time runs on until Chromium
// reports the grant's end, which it does only when the page has nothing
// left to run. A
// wall-clock cap (Options.SettleTimeout, the caller's deadline) ends a page
// whose requests never finish.

// Why a render stopped waiting for the page (compare.RenderDetails.SettledBy).
const (
	// SettledIdle: the page had no more work to do.
	SettledIdle = "idle"
	// SettledBudget: the page was still working when its budget of page
	// time ran out (an interval, an animation loop, a timer due later).
	SettledBudget = "budget"
	// SettledDeadline: the wall-clock cap came first, for example because a
	// request never finished.
	SettledDeadline = "deadline"
	// SettledRequestBudget: the page used up the audit's request or byte
	// budget; what it did not load is missing.
	SettledRequestBudget = "request_budget"
)

// Tuning of the rule.
const (
	// firstGrant is the page time granted first, which also lets frames
	// run once before most of the budget is spent.
	firstGrant = 250 * time.Millisecond
	// minGrant is the least page time granted at a time.
	minGrant = 50 * time.Millisecond
	// starvationTasks is how many tasks may run before page time is moved
	// on anyway, so a page that posts tasks forever still reaches its budget.
	starvationTasks = 200
	// probeTimeout bounds one state read or frame of the rule.
	probeTimeout = 2 * time.Second
	// clockLead is how far ahead of the wall clock page time starts, so
	// that Date.now never goes back from what the page read before its
	// first grant (a race seen under load: 24 ms back).
	clockLead = time.Second
	// frameNudge is how long a frame may keep the rule waiting before a
	// little page time is granted to let it come.
	frameNudge = 250 * time.Millisecond
)

// settleResult is how a render stopped waiting.
type settleResult struct {
	by string
	// pageTime is the page time at the page's last activity (or its load).
	pageTime time.Duration
	// pending lists requests still in flight when the wall-clock cap hit.
	pending []string
}

// settled reports whether the page finished within its budget, idle or not.
func (r settleResult) settled() bool { return r.by == SettledIdle || r.by == SettledBudget }

// settle runs the completeness rule after the navigation committed.
func (a *audit) settle(ctx context.Context, d deadlines) settleResult {
	wall := time.Now().Add(a.opts.SettleTimeout)
	if wall.After(d.work) {
		wall = d.work
	}
	ctx, cancel := context.WithDeadline(ctx, wall)
	defer cancel()
	budget := a.opts.Budget
	used, grant := time.Duration(0), min(firstGrant, budget)
	var prev pageState
	overtime := false // the one grant past the budget was given
	for first := true; ; first = false {
		a.clock.set(used + grant)
		if err := a.grantPageTime(ctx, grant, first); err != nil {
			return a.cut(err)
		}
		used += grant
		st, busy, err := a.observe(ctx, prev)
		if err != nil {
			return a.cut(err)
		}
		// A WebSocket that closed gets one more grant for the page's
		// close handler (to fall back to polling, say), once even at the
		// budget's end.
		closed := a.net.takeSocketClosed()
		if !busy && !closed {
			idle, after, err := a.idle(ctx, st)
			if err != nil {
				return a.cut(err)
			}
			if idle {
				return a.done(SettledIdle, after)
			}
			st = after
		}
		prev = st
		if used >= budget {
			// A WebSocket that closed, or a request still in flight (page
			// time ran on while its body arrived: Chromium moves page
			// time forward after starvationTasks tasks, and every chunk
			// of a long body is one), gets one more grant once it ended.
			if overtime || (!closed && !a.net.inFlight()) {
				return a.done(SettledBudget, st)
			}
			if err := a.waitRequests(ctx); err != nil {
				return a.cut(err)
			}
			overtime, grant = true, minGrant
			continue
		}
		grant = nextGrant(st, budget-used)
	}
}

// observe reads the page's state after a grant, renders a frame when one
// could run page callbacks, and waits for a connecting WebSocket's answer.
// busy says the page has work in flight, scheduled or just done.
func (a *audit) observe(ctx context.Context, prev pageState) (st pageState, busy bool, err error) {
	if st, err = a.pageState(ctx); err != nil {
		return st, false, err
	}
	changed := false
	if st.needsFrame(prev) {
		switch err := a.renderFrame(ctx); {
		case err == nil:
			after, err := a.pageState(ctx)
			if err != nil {
				return st, false, err
			}
			changed, st = after.changedSince(st), after
		case ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded):
			return st, false, err
		default:
			// The frame did not come within probeTimeout (seen with
			// several renders at once): go on without it rather than
			// end the render; the budget still bounds the page.
			a.b.log.Debug("frame held back", "url", a.req.URL)
		}
	}
	if a.net.socketOpen() {
		// Page time does not stop for a connecting WebSocket: wait for
		// the proxy's refusal before granting more, or the page would
		// run out its budget before its error handler can run.
		if err := a.waitSocket(ctx); err != nil {
			return st, false, err
		}
	}
	return st, changed || st.scheduled(a.budgetEnd()) || !a.net.quiet(), nil
}

// idle decides whether a page that looks quiet is done: a stream it
// opened that has not spoken yet is waited for, and the page is not done.
// (Its posted tasks have run: page time reached the grant's end, which it
// does only when the page has nothing left to run, or at the load check,
// which lets them run; see idleAtLoad.)
func (a *audit) idle(ctx context.Context, st pageState) (bool, pageState, error) {
	if wait := a.net.streamWait(); wait > 0 {
		return false, st, a.waitStream(ctx, wait)
	}
	return true, st, nil
}

// budgetEnd is the end of the page-time budget in page-time milliseconds.
func (a *audit) budgetEnd() float64 { return float64(a.opts.Budget.Milliseconds()) }

// nextGrant is how much page time to grant next: up to the next timer when
// only timeouts are waiting, otherwise what remains.
func nextGrant(st pageState, remaining time.Duration) time.Duration {
	g := remaining
	if st.Timeouts > 0 && st.Intervals == 0 && st.Frames == 0 && st.Idle == 0 && st.Layout == 0 {
		wait := time.Duration(math.Ceil(st.NextDue-st.Now)) * time.Millisecond
		g = min(remaining, max(wait+time.Millisecond, minGrant))
	}
	return max(min(g, remaining), min(minGrant, remaining))
}

// done builds the result of a render that finished within its budget.
func (a *audit) done(by string, st pageState) settleResult {
	if a.t.proxy.usage().blocked[ReasonBudget] > 0 {
		by = SettledRequestBudget
	}
	t := max(st.Last, st.Load)
	return settleResult{by: by, pageTime: time.Duration(t * float64(time.Millisecond))}
}

// cut builds the result of a render the wall-clock cap (or an error) ended.
func (a *audit) cut(err error) settleResult {
	_, pending := a.net.pending()
	a.b.log.Info("page did not finish", "url", a.req.URL, "err", err, "in_flight", pending)
	by := SettledDeadline
	if a.t.proxy.usage().blocked[ReasonBudget] > 0 {
		by = SettledRequestBudget
	}
	return settleResult{by: by, pending: pending}
}
