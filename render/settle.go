package render

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
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
//     the browser finds no idle period) and observers waiting for their
//     first notification;
//   - the viewport is tall, so sections that appear when scrolled into view
//     are in view without scrolling;
//   - after each grant of page time the page renders a frame when anything
//     changed, so layout-triggered callbacks (IntersectionObserver, lazy
//     loading) run, and then the rule is checked again.
//
// The page is idle when nothing is in flight and nothing is scheduled within
// the budget; it ran out of budget when work remains at the end of it. A
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

// pageStateJS runs at the start of every document, before the page's own
// scripts, in the page's world (it must see the page's timers). It wraps
// the scheduling functions to keep count and exposes the counts under a
// random, non-enumerable, non-writable property named %[1]q. The counts
// decide only when to stop waiting: a page that lies to them ends its
// render early or at the budget, never later than the caps.
const pageStateJS = `(() => {
const KEY = %[1]q;
const W = window;
if (Object.prototype.hasOwnProperty.call(W, KEY)) return;
const P = performance, now = () => P.now();
const st = {cb: 0, last: 0, mut: 0, obs: 0, timeouts: new Map(), intervals: new Set(), raf: new Set(), idle: new Map(), layout: new Map()};
const ran = () => { st.cb++; st.last = now(); };
const sT = W.setTimeout, cT = W.clearTimeout, sI = W.setInterval, cI = W.clearInterval;
const rAF = W.requestAnimationFrame, cAF = W.cancelAnimationFrame;
const rIC = W.requestIdleCallback, cIC = W.cancelIdleCallback;
const forget = (id) => { st.timeouts.delete(id); st.intervals.delete(id); };
W.setTimeout = function setTimeout(f, ms, ...args) {
  if (typeof f !== "function") return sT.call(W, f, ms, ...args);
  let id;
  id = sT.call(W, function () { st.timeouts.delete(id); ran(); return f.apply(this, arguments); }, ms, ...args);
  st.timeouts.set(id, now() + Math.max(0, Number(ms) || 0));
  return id;
};
W.clearTimeout = function clearTimeout(id) { forget(id); return cT.call(W, id); };
W.setInterval = function setInterval(f, ms, ...args) {
  if (typeof f !== "function") return sI.call(W, f, ms, ...args);
  const id = sI.call(W, function () { ran(); return f.apply(this, arguments); }, ms, ...args);
  st.intervals.add(id);
  return id;
};
W.clearInterval = function clearInterval(id) { forget(id); return cI.call(W, id); };
if (rAF) {
  W.requestAnimationFrame = function requestAnimationFrame(f) {
    let id;
    id = rAF.call(W, function (t) { st.raf.delete(id); ran(); return f.call(this, t); });
    st.raf.add(id);
    return id;
  };
  W.cancelAnimationFrame = function cancelAnimationFrame(id) { st.raf.delete(id); return cAF.call(W, id); };
}
if (rIC) {
  let next = 1;
  W.requestIdleCallback = function requestIdleCallback(f, opts) {
    const id = next++;
    let done = false, nid = 0, tid = 0;
    const run = (deadline) => {
      if (done) return;
      done = true; st.idle.delete(id); cIC.call(W, nid); cT.call(W, tid); ran();
      f(deadline);
    };
    nid = rIC.call(W, (d) => run(d), opts);
    // Without an idle period the browser would run it only at its timeout;
    // renderers fast-forward, so give it 50 ms of page time.
    const wait = Math.min(50, (opts && opts.timeout) || 50);
    tid = sT.call(W, () => run({didTimeout: false, timeRemaining: () => 50}), wait);
    st.idle.set(id, () => { done = true; cIC.call(W, nid); cT.call(W, tid); });
    return id;
  };
  W.cancelIdleCallback = function cancelIdleCallback(id) { const c = st.idle.get(id); if (c) { c(); st.idle.delete(id); } };
}
const watch = (name) => {
  const O = W[name];
  if (typeof O !== "function") return;
  const wrapped = class extends O {
    constructor(cb, opts) {
      let self;
      super(function (entries, o) { st.layout.set(self, 0); ran(); return cb.call(this, entries, o); }, opts);
      self = this;
      st.layout.set(this, 0);
    }
    observe(t, o) { st.obs++; st.layout.set(this, (st.layout.get(this) || 0) + 1); return super.observe(t, o); }
    disconnect() { st.layout.delete(this); return super.disconnect(); }
  };
  Object.defineProperty(W, name, {value: wrapped, writable: true, configurable: true});
};
watch("IntersectionObserver");
watch("ResizeObserver");
new MutationObserver((records) => { st.mut += records.length; st.last = now(); })
  .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
Object.defineProperty(W, KEY, {enumerable: false, configurable: false, writable: false, value: () => {
  let due = -1, layout = 0;
  for (const t of st.timeouts.values()) if (due < 0 || t < due) due = t;
  for (const n of st.layout.values()) layout += n;
  let refresh = -1;
  const meta = document.querySelector('meta[http-equiv="refresh" i]');
  if (meta) { const s = parseFloat(meta.content); if (s >= 0) refresh = s * 1000; }
  return {now: now(), last: st.last, callbacks: st.cb, mutations: st.mut, observes: st.obs, refresh: refresh,
    timeouts: st.timeouts.size, next_due: due, intervals: st.intervals.size, frames: st.raf.size,
    idle: st.idle.size, layout: layout, load: ((P.getEntriesByType("navigation")[0] || {}).loadEventEnd) || 0};
}});
})()`

// pageState is what pageStateJS counts, in page-time milliseconds.
type pageState struct {
	Now       float64 `json:"now"`
	Last      float64 `json:"last"`
	Callbacks int     `json:"callbacks"`
	Mutations int     `json:"mutations"`
	Observes  int     `json:"observes"`
	Timeouts  int     `json:"timeouts"`
	NextDue   float64 `json:"next_due"`
	Intervals int     `json:"intervals"`
	Frames    int     `json:"frames"`
	Idle      int     `json:"idle"`
	Layout    int     `json:"layout"`
	// Load is the page time of the end of the load event (0 before it).
	Load float64 `json:"load"`
	// Refresh is the delay of the refresh the document scheduled (meta
	// refresh or Refresh header), -1 when none is to come.
	Refresh float64 `json:"refresh"`
}

// changedSince reports whether the page did anything since o.
func (s pageState) changedSince(o pageState) bool {
	return s.Callbacks != o.Callbacks || s.Mutations != o.Mutations || s.Observes != o.Observes
}

// needsFrame reports whether a rendered frame could run page callbacks:
// observers waiting for their first notification, animation frames or idle
// callbacks pending, or a changed page that has observers at all.
func (s pageState) needsFrame(prev pageState) bool {
	return s.Layout > 0 || s.Frames > 0 || s.Idle > 0 || (s.Observes > 0 && s.changedSince(prev))
}

// scheduled reports whether the page has work planned before page time end.
func (s pageState) scheduled(end float64) bool {
	return s.Intervals > 0 || s.Frames > 0 || s.Idle > 0 || s.Layout > 0 ||
		(s.Timeouts > 0 && s.NextDue <= end) || (s.Refresh >= 0 && s.Load+s.Refresh <= end)
}

// stateKey is a fresh random property name for pageStateJS.
func stateKey() string { return "__lekta_" + rand.Text() }

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
	budget := a.opts.Budget
	end := float64(budget.Milliseconds())
	ctx, cancel := context.WithDeadline(ctx, wall)
	defer cancel()
	used, grant := time.Duration(0), min(firstGrant, budget)
	var prev pageState
	overtime := false // the one grant past the budget was given
	for first := true; ; first = false {
		a.clock.set(used + grant)
		if err := a.grantPageTime(ctx, grant, first); err != nil {
			return a.cut(err)
		}
		used += grant
		st, err := a.pageState(ctx)
		if err != nil {
			return a.cut(err)
		}
		changed := false
		if st.needsFrame(prev) {
			err := a.renderFrame(ctx)
			switch {
			case err == nil:
				after, err := a.pageState(ctx)
				if err != nil {
					return a.cut(err)
				}
				changed, st = after.changedSince(st), after
			case ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded):
				return a.cut(err)
			default:
				// The frame did not come within probeTimeout (seen with
				// several renders at once): go on without it rather than
				// end the render; the budget still bounds the page.
				a.b.log.Debug("frame held back", "url", a.req.URL)
			}
		}
		if a.net.socketOpen() {
			// Page time does not stop for a connecting WebSocket: wait
			// for the proxy's refusal before granting more, or the page
			// would run out its budget before its error handler can run.
			if err := a.waitSocket(ctx); err != nil {
				return a.cut(err)
			}
		}
		// A WebSocket that closed gets one more grant for the page's
		// close handler (to fall back to polling, say), once even at the
		// budget's end.
		closed := a.net.takeSocketClosed()
		quiet := !changed && !closed && !st.scheduled(end) && a.net.quiet()
		if quiet {
			if wait := a.net.streamWait(); wait > 0 {
				// A stream the page opened has not spoken yet.
				if err := a.waitStream(ctx, wait); err != nil {
					return a.cut(err)
				}
				quiet = false
			}
		}
		switch {
		case quiet:
			return a.done(SettledIdle, st)
		case used >= budget && (!closed || overtime):
			return a.done(SettledBudget, st)
		}
		prev = st
		if used >= budget {
			overtime, grant = true, minGrant
			continue
		}
		grant = nextGrant(st, budget-used)
	}
}

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

// grantPageTime lets the page run for d of page time and waits until it
// has (requests in flight stop page time, not the wait).
func (a *audit) grantPageTime(ctx context.Context, d time.Duration, first bool) error {
	select {
	case <-a.budgetExpired: // a stale expiry of an earlier grant
	default:
	}
	streams := a.net.onlyStreams()
	if err := a.setPageTime(ctx, d, first, streams); err != nil {
		return err
	}
	tick := time.NewTicker(streamGrace / 5)
	defer tick.Stop()
	loaded := a.loadFired
	if !first {
		loaded = nil
	}
	for {
		select {
		case <-a.budgetExpired:
			return nil
		case <-loaded:
			// A page that has nothing scheduled once it loaded is done:
			// do not wait for Chromium to report the grant's end.
			loaded = nil
			if a.idleAtLoad(ctx) {
				return nil
			}
		case <-tick.C:
			// An EventSource opened during the grant holds page time
			// still for good: grant again, not waiting for it.
			if !streams && a.net.onlyStreams() {
				streams = true
				if err := a.setPageTime(ctx, d, false, true); err != nil {
					return err
				}
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// idleAtLoad reports whether the loaded page has nothing in flight and
// nothing scheduled.
func (a *audit) idleAtLoad(ctx context.Context) bool {
	if !a.net.quiet() || a.net.streamWait() > 0 {
		return false
	}
	st, err := a.pageState(ctx)
	return err == nil && !st.scheduled(float64(a.opts.Budget.Milliseconds())) && st.Observes == 0
}

// setPageTime sets the virtual time policy for a grant of d.
func (a *audit) setPageTime(ctx context.Context, d time.Duration, first, streams bool) error {
	ms := float64(d.Milliseconds())
	policy := emulation.VirtualTimePolicyPauseIfNetworkFetchesPending
	if streams {
		// Only an EventSource is in flight, a fetch that never ends.
		policy = emulation.VirtualTimePolicyAdvance
	}
	p := emulation.SetVirtualTimePolicyParams{
		Policy: policy, Budget: &ms, MaxVirtualTimeTaskStarvationCount: starvationTasks,
	}
	if first {
		// Page time starts a little after the wall clock's now and only
		// moves forward: the page's scripts may already have read the
		// real clock between this line and the policy taking effect.
		p.InitialVirtualTime = cdp.TimeSinceEpoch(float64(time.Now().Add(clockLead).UnixMilli()) / 1000)
	}
	if _, err := cdp.Call(ctx, a.t.target, emulation.SetVirtualTimePolicy, p); err != nil {
		return fmt.Errorf("grant page time: %w", err)
	}
	return nil
}

// waitSocket waits up to socketWait of wall time for every open WebSocket
// to close.
func (a *audit) waitSocket(ctx context.Context) error {
	until := time.Now().Add(socketWait)
	for a.net.socketOpen() && time.Now().Before(until) {
		if err := a.waitStream(ctx, time.Until(until)); err != nil {
			return err
		}
	}
	return nil
}

// waitStream waits up to d of wall time for a stream to change: its first
// message, or its close.
func (a *audit) waitStream(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.net.changed:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// pageState reads pageStateJS's counts from the main frame.
func (a *audit) pageState(ctx context.Context) (pageState, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	res, err := cdp.Call(ctx, a.t.target, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    fmt.Sprintf("(() => { const f = window[%q]; return typeof f === 'function' ? f() : null; })()", a.t.stateKey),
		ReturnByValue: new(true),
		Silent:        new(true),
	})
	if err != nil {
		return pageState{}, fmt.Errorf("read page state: %w", err)
	}
	st := pageState{Refresh: -1}
	if res.Result == nil || string(res.Result.Value) == "null" {
		// A document the script did not reach (about:blank, a blob:):
		// nothing is known to be scheduled.
		return st, nil
	}
	if err := json.Unmarshal(res.Result.Value, &st); err != nil {
		return pageState{}, fmt.Errorf("read page state: %w", err)
	}
	a.refresh.apply(&st)
	a.clock.seen(st)
	return st, nil
}

// frameJS resolves after the page rendered two frames, so layout-triggered
// callbacks of the first frame have run.
const frameJS = `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`

// renderFrame lets the page render, in an isolated world page script
// cannot touch. Animation frames usually run while page time stands
// still; when Chromium holds the frame back (seen with several renders at
// once), a little page time is granted every frameNudge until it comes.
func (a *audit) renderFrame(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	world, err := a.isolatedWorld(ctx)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		_, err := cdp.Call(ctx, a.t.target, runtime.Evaluate, runtime.EvaluateParams{
			Expression: frameJS, ContextID: world, AwaitPromise: new(true), ReturnByValue: new(true), Silent: new(true),
		})
		done <- err
	}()
	nudge := time.NewTicker(frameNudge)
	defer nudge.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("render a frame: %w", err)
			}
			return nil
		case <-nudge.C:
			if err := a.setPageTime(ctx, minGrant, false, a.net.onlyStreams()); err != nil {
				return err
			}
		}
	}
}

// isolatedWorld returns an isolated world of the main frame's document.
func (a *audit) isolatedWorld(ctx context.Context) (runtime.ExecutionContextID, error) {
	w, err := cdp.Call(ctx, a.t.target, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: a.mainFrame, WorldName: "lekta"})
	if err != nil {
		return 0, fmt.Errorf("create isolated world: %w", err)
	}
	if w.ExecutionContextID == 0 {
		return 0, errors.New("create isolated world: no execution context")
	}
	return w.ExecutionContextID, nil
}
