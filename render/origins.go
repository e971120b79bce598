package render

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/go-sourcemap/sourcemap"

	"lekta.dev/lekta/compare"
)

// The lane names the site's own code behind each write, request and
// navigation (compare.Origin): the first frame of a stack that is no
// library's, mapped to its original file when its script has a source map.
// An inline map costs nothing; an external one is fetched through the
// proxy like any request of the page (the audit's rules: robots.txt, the
// budget, the request records), only from the page's own origin, at most
// MaxSourceMaps an audit and maxReadBody bytes each, and never when
// Options.NoSourceMaps is set.

// MaxSourceMaps caps the source maps one audit fetches.
const MaxSourceMaps = 3

// resolveWait bounds the wait for the proxy's reading of bodies, and
// mapFetchTimeout one source map's fetch.
const (
	resolveWait     = 2 * time.Second
	mapFetchTimeout = 5 * time.Second
)

// initiators are the stacks that made the page's requests, from the
// network events (Chromium's, which no page script can forge).
type initiators struct {
	mu sync.Mutex
	// byURL is the first stack of each requested URL (fetch, XHR, script).
	byURL map[string][]compare.Frame
	// navs are the main frame's script-initiated navigations.
	navs []initiatedNav
}

// initiatedNav is a navigation of the main frame a script started.
type initiatedNav struct {
	url   string
	stack []compare.Frame
}

// maxInitiators bounds the stacks kept.
const maxInitiators = 256

// note keeps the initiator stack of a request.
func (n *initiators) note(e *network.EventRequestWillBeSent, mainFrame string) {
	if e.Initiator == nil || e.Initiator.Stack == nil || e.RedirectResponse != nil {
		return
	}
	var stack []compare.Frame
	for st := e.Initiator.Stack; st != nil && len(stack) < recorderFrames; st = st.Parent {
		for _, f := range st.CallFrames {
			if len(stack) >= recorderFrames {
				break
			}
			if f.URL == "" || !(strings.HasPrefix(f.URL, "http:") || strings.HasPrefix(f.URL, "https:")) {
				continue
			}
			stack = append(stack, compare.Frame{Script: pageString(f.URL), Line: int(f.LineNumber) + 1, Column: int(f.ColumnNumber) + 1})
		}
	}
	if len(stack) == 0 {
		return
	}
	u := withoutFragment(e.Request.URL + e.Request.URLFragment)
	n.mu.Lock()
	defer n.mu.Unlock()
	if e.Type == network.ResourceTypeDocument && string(e.FrameID) == mainFrame {
		if len(n.navs) < MaxNavigations+8 {
			n.navs = append(n.navs, initiatedNav{url: u, stack: stack})
		}
		return
	}
	if n.byURL == nil {
		n.byURL = map[string][]compare.Frame{}
	}
	if _, ok := n.byURL[u]; !ok && len(n.byURL) < maxInitiators {
		n.byURL[u] = stack
	}
}

// withoutFragment is a URL without its fragment, as the proxy and
// Chromium's events both spell it (parsed and written again).
func withoutFragment(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// resolver turns stacks into origins for one audit.
type resolver struct {
	a       *audit
	doc     string
	scripts map[string]*scriptBody
	maps    map[string]*sourcemap.Consumer // by script URL; nil: none
	// mapCode are the site's own original files of each map, by script
	// URL (mapSources).
	mapCode map[string][]*compare.CodeSource
	// docs are the page HTML documents the proxy read, by URL.
	docs map[string]*compare.CodeSource
}

// waitBodies waits, at most resolveWait, for the proxy's reading of the
// bodies it relayed.
func (a *audit) waitBodies() {
	done := make(chan struct{})
	go func() { a.t.proxy.bodies.wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(resolveWait):
	}
}

// newResolver reads the scripts the proxy read (after waitBodies) and
// fetches the source maps the stacks need.
func (a *audit) newResolver(ctx context.Context, stacks [][]compare.Frame) *resolver {
	b := &a.t.proxy.bodies
	b.mu.Lock()
	r := &resolver{a: a, doc: withoutFragment(a.net.documentURL()), scripts: make(map[string]*scriptBody, len(b.scripts)),
		maps: map[string]*sourcemap.Consumer{}, mapCode: map[string][]*compare.CodeSource{}, docs: map[string]*compare.CodeSource{}}
	for k, v := range b.scripts {
		r.scripts[withoutFragment(k)] = v
	}
	for k, v := range b.docs {
		r.docs[withoutFragment(k)] = v
	}
	b.mu.Unlock()
	r.loadMaps(ctx, stacks)
	return r
}

// sameOrigin reports whether u is of the page's origin.
func (r *resolver) sameOrigin(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && origin(u) == r.a.pageOrigin()
}

// origin resolves a stack: its first frame of the site's own code, else
// its first frame, with the library of the frames before.
func (r *resolver) origin(stack []compare.Frame) *compare.Origin {
	if len(stack) == 0 {
		return nil
	}
	var first *compare.Origin
	for _, f := range stack {
		o := r.frame(f)
		if first == nil {
			first = o
		}
		if o.Library == "" {
			o.Own = true
			if o != first {
				o.Library = first.Library
			}
			return o
		}
	}
	return first
}

// frame resolves one frame: its library, and its original place.
func (r *resolver) frame(f compare.Frame) *compare.Origin {
	o := &compare.Origin{Script: f.Script, Line: f.Line, Column: f.Column, Inline: f.Script == r.doc}
	if o.Inline {
		return o
	}
	if sb := r.scripts[f.Script]; sb != nil && sb.library != "" {
		o.Library = sb.library
		return o
	}
	if lib := fileLibrary(f.Script); lib != "" {
		o.Library = lib
		return o
	}
	if m := r.maps[f.Script]; m != nil && f.Line > 0 {
		if src, _, line, col, ok := m.Source(f.Line, max(f.Column-1, 0)); ok && src != "" && line > 0 {
			o.Library = sourceLibrary(src)
			o.Source = &compare.SourcePos{File: pageString(cleanSource(src)), Line: line, Column: col + 1}
		}
	}
	return o
}

// cleanSource is a source map's original file as a person names it:
// without the bundler's scheme ("webpack://app/", "vite://") and the
// leading "./" and "../" of a path relative to the map.
func cleanSource(s string) string {
	if i := strings.Index(s, "://"); i >= 0 && !strings.HasPrefix(s, "http") {
		s = s[i+3:]
		if j := strings.IndexByte(s, '/'); j >= 0 && !strings.Contains(s[:j], ".") {
			s = s[j+1:]
		}
	}
	for strings.HasPrefix(s, "../") || strings.HasPrefix(s, "./") {
		s = s[strings.IndexByte(s, '/')+1:]
	}
	return s
}
