package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
)

// errStopping: the server is shutting down and takes no new audits.
var errStopping = errors.New("the server is shutting down")

// shuttingDown is the cause audits are cancelled with at shutdown: queued
// ones at once, running ones when the grace period ends.
var shuttingDown = &audit.CancelError{Reason: "the service was shutting down"}

// errQueueFull: every queue slot is taken.
var errQueueFull = errors.New("the audit queue is full")

// recentKeep is how long a finished run stays readable from memory, which
// covers the moment between the store write and the next poll, and reports
// the store could not keep.
const (
	recentKeep = 2 * time.Minute
	recentMax  = 512
)

// run is one audit this process runs or waits for.
type run struct {
	id      string
	url     string
	host    string
	trigger audit.Trigger
	ticket  *audit.Ticket
	queued  time.Time
	// remote is true for a join of an audit running in another process.
	remote bool
	// position is the queue place when it was queued (1 is next).
	position int
	// seen is set on a view of an audit queued or running in another
	// instance, made from its progress entry: it is never done here.
	seen *cache.Progress

	mu      sync.Mutex
	started time.Time
	ended   time.Time
	report  *audit.Report
	err     error
	done    chan struct{}
}

// state is the run's status word for the API: queued, running or done.
func (r *run) state() (state string, since time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.ended.IsZero():
		return "done", r.ended
	case !r.started.IsZero():
		return "running", r.started
	}
	return "queued", r.queued
}

// result returns the finished run's report or error.
func (r *run) result() (*audit.Report, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.report, r.err
}

// pool is the bounded queue and the workers that drain it.
type pool struct {
	now   func() time.Time
	slots chan struct{}
	jobs  chan *run
	// stop is cancelled (cause shuttingDown) when shutdown begins: queued
	// audits then end cancelled at once, never charged, and joins of
	// remote audits stop waiting.
	stop       context.Context
	cancelStop context.CancelCauseFunc
	// halt is the context of running audits, cancelled (cause
	// shuttingDown) when the shutdown's grace period ends.
	halt       context.Context
	cancelHalt context.CancelCauseFunc
	graceTimer *time.Timer
	wg         sync.WaitGroup
	finish     func(ctx context.Context, r *run)

	mu      sync.Mutex
	closed  bool
	running int
	runs    map[string]*run
	recent  map[string]*run
	order   []string
}

func newPool(queue int, now func() time.Time) *pool {
	stop, cancel := context.WithCancelCause(context.Background())
	halt, cancelHalt := context.WithCancelCause(context.Background())
	return &pool{
		now: now, slots: make(chan struct{}, queue), jobs: make(chan *run, queue),
		stop: stop, cancelStop: cancel, halt: halt, cancelHalt: cancelHalt,
		runs: map[string]*run{}, recent: map[string]*run{},
	}
}

// start launches n workers; finish runs one audit.
func (p *pool) start(n int, finish func(ctx context.Context, r *run)) {
	p.finish = finish
	for range n {
		p.wg.Go(p.work)
	}
}

// work runs queued audits until the queue closes. An audit taken after
// shutdown began ends cancelled at once, without contacting the site.
func (p *pool) work() {
	for r := range p.jobs {
		<-p.slots
		p.begin(r)
		ctx := p.halt
		if p.stop.Err() != nil {
			ctx = p.stop
		}
		p.finish(ctx, r)
		p.end(r)
	}
}

// reserve takes a queue slot, before the audit is submitted, so a full
// queue never charges a host's limiter.
func (p *pool) reserve() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errStopping
	}
	select {
	case p.slots <- struct{}{}:
		return nil
	default:
		return errQueueFull
	}
}

// release gives back a slot that reserve took and no job used.
func (p *pool) release() { <-p.slots }

// enqueue hands a submitted run to the workers; its slot is already
// reserved, so the send never blocks. It returns false once shutdown has
// begun: the caller still holds the slot.
func (p *pool) enqueue(r *run) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.runs[r.id] = r
	p.jobs <- r
	return true
}

// position is the place a run queued now would take (1 is next).
func (p *pool) position() int { return len(p.jobs) + 1 }

// byURL finds a run of url queued or running in this process.
func (p *pool) byURL(url string) *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.runs {
		if r.url == url {
			return r
		}
	}
	return nil
}

// wait runs a join of an audit running elsewhere on its own goroutine,
// holding the reserved slot until the joined audit ends. It returns false
// once shutdown has begun.
func (p *pool) wait(r *run, finish func(ctx context.Context, r *run)) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.runs[r.id] = r
	p.wg.Go(func() {
		defer p.release()
		p.begin(r)
		finish(p.stop, r)
		p.end(r)
	})
	return true
}

func (p *pool) begin(r *run) {
	r.mu.Lock()
	r.started = p.now()
	r.mu.Unlock()
	p.mu.Lock()
	p.running++
	p.mu.Unlock()
}

// end marks r finished, wakes its waiters and moves it to the recent runs.
func (p *pool) end(r *run) {
	r.mu.Lock()
	r.ended = p.now()
	r.mu.Unlock()
	close(r.done)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running--
	delete(p.runs, r.id)
	p.recent[r.id] = r
	p.order = append(p.order, r.id)
	p.prune()
}

// prune drops recent runs past recentKeep or beyond recentMax; p.mu is held.
func (p *pool) prune() {
	cut := p.now().Add(-recentKeep)
	n := 0
	for _, id := range p.order {
		r := p.recent[id]
		if len(p.order)-n <= recentMax && r.ended.After(cut) {
			break
		}
		delete(p.recent, id)
		n++
	}
	p.order = p.order[n:]
}

// lookup finds a queued, running or recently finished run.
func (p *pool) lookup(id string) *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.runs[id]; ok {
		return r
	}
	if r, ok := p.recent[id]; ok && r.ended.After(p.now().Add(-recentKeep)) {
		return r
	}
	return nil
}

// local reports whether id is queued or running in this process.
func (p *pool) local(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.runs[id]
	return ok
}

// depth is the number of audits waiting for a worker.
func (p *pool) depth() int { return len(p.jobs) }

// busy is the number of runs in progress.
func (p *pool) busy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running
}

// active is the number of runs queued or in progress.
func (p *pool) active() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.runs)
}

// stopping is closed when shutdown begins.
func (p *pool) stopping() <-chan struct{} { return p.stop.Done() }

// shutdown closes the queue, ends queued runs at once (cancelled, never
// charged), cancels running ones once grace has passed, and waits for the
// workers and joins, or for ctx.
func (p *pool) shutdown(ctx context.Context, grace time.Duration) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		p.cancelStop(shuttingDown)
		close(p.jobs)
		// One more worker ends the queued runs while the others finish
		// the running ones.
		if p.finish != nil {
			p.wg.Go(p.work)
		}
		p.graceTimer = time.AfterFunc(grace, func() { p.cancelHalt(shuttingDown) })
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
