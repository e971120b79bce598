package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/render"
)

// lazyBrowser is the auditor's render lane. It starts Chromium on first
// use, so an audit the store answers (cached, joined or refused) never
// starts a browser. It is safe for concurrent use.
type lazyBrowser struct {
	opts render.Options
	// once: the process renders one page (lekta audit), so the browser
	// closes as soon as that render is read, while the audit compares and
	// stores, and Close only waits for it to be gone.
	once bool

	mu      sync.Mutex
	b       *render.Browser
	closed  bool
	warming bool          // Warm was called
	closing chan struct{} // closed once the browser a once-render closed is gone
}

// start returns the running browser, launching it on the first call; a
// failed launch is tried again by the next call. ctx bounds the launch.
func (l *lazyBrowser) start(ctx context.Context) (*render.Browser, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, render.ErrClosed
	}
	if l.b == nil {
		b, err := render.Start(ctx, l.opts)
		if err != nil {
			return nil, fmt.Errorf("start browser: %w", err)
		}
		l.b = b
	}
	return l.b, nil
}

// warmTimeout bounds a start the auditor asked for ahead of the render.
const warmTimeout = time.Minute

// Warm starts the browser in the background, so it comes up while
// robots.txt and the plain lane run; Render then finds it started (or
// waits for the start, or tries again if it failed).
func (l *lazyBrowser) Warm() {
	l.mu.Lock()
	started := l.b != nil || l.closed || l.warming
	l.warming = true
	l.mu.Unlock()
	if started {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), warmTimeout)
		defer cancel()
		_, _ = l.start(ctx)
	}()
}

// Render implements audit.Renderer, starting the browser if need be.
func (l *lazyBrowser) Render(ctx context.Context, req render.Request) (*compare.Snapshot, error) {
	b, err := l.start(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := b.Render(ctx, req)
	if l.once {
		l.closeEarly()
	}
	return snap, err
}

// closeEarly closes the browser in the background after the one render
// of a once-browser: its page is read, and nothing renders again.
func (l *lazyBrowser) closeEarly() {
	l.mu.Lock()
	b := l.b
	l.b, l.closed = nil, true
	done := make(chan struct{})
	l.closing = done
	l.mu.Unlock()
	go func() {
		defer close(done)
		if b != nil {
			_ = b.Close()
		}
	}()
}

// UserAgent implements audit.Renderer. Before the browser runs only the
// LektaBot suffix is known.
func (l *lazyBrowser) UserAgent() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b == nil {
		return strings.TrimSpace(l.opts.UASuffix)
	}
	return l.b.UserAgent()
}

// Close stops the browser if it was started, or waits until the one a
// once-render closed is gone; later starts fail.
func (l *lazyBrowser) Close() error {
	l.mu.Lock()
	b, closing := l.b, l.closing
	l.b, l.closed = nil, true
	l.mu.Unlock()
	if closing != nil {
		<-closing
	}
	if b == nil {
		return nil
	}
	return b.Close()
}
