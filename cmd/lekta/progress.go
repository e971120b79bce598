package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
)

// progress shows the running audit's step and elapsed time on one line of
// stderr, redrawn in place, when stderr is a terminal; otherwise it writes
// nothing, so pipes, logs and --json output stay clean.
type progress struct {
	w     io.Writer
	start time.Time
	mu    sync.Mutex
	words string
	quit  chan struct{}
	done  chan struct{}
}

// progressEvery is how often the line is redrawn.
const progressEvery = 250 * time.Millisecond

// startProgress starts the display on w when w is a terminal; the result
// is usable (and silent) either way.
func startProgress(w io.Writer) *progress {
	if !isTerminal(w) {
		return nil
	}
	p := &progress{w: w, start: time.Now(), words: "starting", quit: make(chan struct{}), done: make(chan struct{})}
	go p.loop()
	return p
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// step is the audit.Ticket watcher.
func (p *progress) step(s audit.Step) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.words = s.Words()
	p.mu.Unlock()
	p.draw()
}

func (p *progress) loop() {
	defer close(p.done)
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			fmt.Fprint(p.w, "\r\x1b[K") // clear the line before the report
			return
		case <-t.C:
			p.draw()
		}
	}
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r\x1b[Klekta: %s … %s", p.words, compare.Duration(time.Since(p.start).Truncate(100*time.Millisecond)))
}

// stop ends the display and clears its line.
func (p *progress) stop() {
	if p == nil {
		return
	}
	close(p.quit)
	<-p.done
}
