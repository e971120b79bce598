package render

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
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
const st = {cb: 0, last: 0, mut: 0, obs: 0, posted: 0, timeouts: new Map(), intervals: new Set(), raf: new Set(), idle: new Map(), layout: new Map()};
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
// Tasks the page posts without a timer: messages (a MessageChannel is how
// React's and other schedulers yield) and scheduler.postTask. A message
// counts once posted; the rule lets the page's posted tasks run before it
// calls the page idle (drainJS), so a count that moved means more work.
const MP = W.MessagePort && W.MessagePort.prototype;
if (MP && typeof MP.postMessage === "function") {
  const pm = MP.postMessage;
  MP.postMessage = function postMessage(...args) { st.posted++; return pm.apply(this, args); };
}
const wpm = W.postMessage;
if (typeof wpm === "function") {
  W.postMessage = function postMessage(...args) { st.posted++; return wpm.apply(this, args); };
}
const S = W.scheduler;
if (S && typeof S.postTask === "function") {
  const pt = S.postTask;
  let task = 0;
  S.postTask = function postTask(f, opts, ...rest) {
    if (typeof f !== "function") return pt.call(S, f, opts, ...rest);
    const id = "task" + (++task);
    st.timeouts.set(id, now() + Math.max(0, Number(opts && opts.delay) || 0));
    const p = pt.call(S, function () { st.timeouts.delete(id); ran(); return f.apply(this, arguments); }, opts, ...rest);
    p.then(null, () => st.timeouts.delete(id));
    return p;
  };
}
if (S && typeof S.yield === "function") {
  const y = S.yield;
  S.yield = function () { st.posted++; return y.apply(S, arguments); };
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
  return {now: now(), last: st.last, callbacks: st.cb, mutations: st.mut, observes: st.obs, posted: st.posted, refresh: refresh,
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
	// Posted counts the messages and yields the page posted to itself.
	Posted    int     `json:"posted"`
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
	return s.Callbacks != o.Callbacks || s.Mutations != o.Mutations || s.Observes != o.Observes || s.Posted != o.Posted
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
