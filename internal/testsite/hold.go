package testsite

import (
	"io"
	"net/http"
	"sync"
	"testing"
)

// heldHTML is the page Hold serves.
const heldHTML = `<!doctype html><html lang="en"><head><title>Held page</title>
<meta name="description" content="A page that answers when the test lets it."></head>
<body><h1>Held page</h1><p>Held until the other callers have arrived.</p></body></html>`

// Hold serves a page without subresources at path, so an audit of it asks
// the site for robots.txt and the page, one after the other. It holds the
// first request until release is called (or the test ends); entered is
// closed when that request arrives. Later requests are answered at once.
func (s *Site) Hold(tb testing.TB, path string) (entered <-chan struct{}, release func()) {
	tb.Helper()
	in, out := make(chan struct{}), make(chan struct{})
	var first, open sync.Once
	release = func() { open.Do(func() { close(out) }) }
	s.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held := false
		first.Do(func() { held = true; close(in) })
		if held {
			select {
			case <-out:
			case <-r.Context().Done():
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, heldHTML)
	}))
	// Registered after Start's Close, so it runs first and Close does not
	// wait on a held request.
	tb.Cleanup(release)
	return in, release
}
