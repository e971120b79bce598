package render

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var idle chan bool
	for {
		select {
		case <-a.budgetExpired:
			return nil
		case <-loaded:
			// A page that has nothing scheduled once it loaded is done:
			// do not wait for Chromium to report the grant's end. The
			// check runs beside the wait, as it needs the page's tasks to
			// run, which they do only while the grant lasts.
			loaded, idle = nil, make(chan bool, 1)
			go func() { idle <- a.idleAtLoad(ctx) }()
		case done := <-idle:
			idle = nil
			if done {
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
// nothing scheduled, and the tasks it posted to itself before (a
// framework's scheduler yielding through a MessageChannel, a router's
// transition after a redirect) did nothing when they ran. It runs while
// the first grant lasts: the page's tasks do not run while page time
// stands still.
func (a *audit) idleAtLoad(ctx context.Context) bool {
	if !a.net.quiet() || a.net.streamWait() > 0 {
		return false
	}
	before, err := a.pageState(ctx)
	if err != nil || before.scheduled(a.budgetEnd()) || before.Observes > 0 {
		return false
	}
	if err := a.drain(ctx); err != nil {
		return false
	}
	after, err := a.pageState(ctx)
	return err == nil && !after.changedSince(before) && !after.scheduled(a.budgetEnd()) && a.net.quiet()
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

// waitRequests waits, up to the wall-clock cap in ctx, until none of the
// page's requests is in flight.
func (a *audit) waitRequests(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for a.net.inFlight() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
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

// drainJS resolves once a message posted now has been delivered: after the
// messages the page posted to itself before it, which are delivered in
// order. Posted messages, like timers, wait while page time stands still.
const drainJS = `new Promise((r) => { const c = new MessageChannel(); c.port1.onmessage = () => { c.port1.close(); r(true); }; c.port2.postMessage(0); })`

// drain lets the tasks the page has posted run, in an isolated world page
// script cannot touch.
func (a *audit) drain(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if err := a.awaitIsolated(ctx, drainJS); err != nil {
		return fmt.Errorf("let the page's tasks run: %w", err)
	}
	return nil
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
	done := make(chan error, 1)
	go func() { done <- a.awaitIsolated(ctx, frameJS) }()
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

// awaitIsolated evaluates a promise expression in a fresh isolated world
// of the main frame, which page script cannot touch, and waits for it.
func (a *audit) awaitIsolated(ctx context.Context, expr string) error {
	world, err := a.isolatedWorld(ctx)
	if err != nil {
		return err
	}
	_, err = cdp.Call(ctx, a.t.target, runtime.Evaluate, runtime.EvaluateParams{
		Expression: expr, ContextID: world, AwaitPromise: new(true), ReturnByValue: new(true), Silent: new(true),
	})
	return err
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
