package render

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/go-sourcemap/sourcemap"

	"lekta.dev/lekta/compare"
)

// Source maps and the site's own code: the resolver reads the maps of the
// site's own scripts (origins.go says which and how many) and indexes
// their original files, its scripts without a map and the page's HTML
// (compare.CodeSource), for content a library rendered.

// loadMaps parses the maps of the site's own scripts (no library's):
// inline ones all, external ones up to MaxSourceMaps, those of the scripts
// on the stacks first, in the order the stacks need them, then those of
// the page's other scripts of its own, whose original files may hold
// content a library rendered.
func (r *resolver) loadMaps(ctx context.Context, stacks [][]compare.Frame) {
	var fetch []string
	seen := map[string]bool{}
	need := func(script string) {
		if seen[script] {
			return
		}
		seen[script] = true
		sb := r.scripts[script]
		if sb == nil || sb.mapURL == "" || sb.library != "" || script == r.doc {
			return
		}
		if strings.HasPrefix(sb.mapURL, "data:") {
			if b := dataMapBytes(sb.mapURL); b != nil {
				r.keepMap(script, b)
			}
			return
		}
		if !r.a.opts.NoSourceMaps && len(fetch) < MaxSourceMaps && r.sameOrigin(sb.mapURL) {
			fetch = append(fetch, script)
		}
	}
	for _, st := range stacks {
		for _, f := range st {
			need(f.Script)
		}
	}
	if len(stacks) > 0 {
		for _, script := range slices.Sorted(maps.Keys(r.scripts)) {
			need(script)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range fetch {
		wg.Go(func() {
			b, err := r.a.fetchMap(ctx, r.scripts[s].mapURL)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				r.a.b.log.Debug("source map", "url", r.scripts[s].mapURL, "err", err)
				return
			}
			r.keepMap(s, b)
		})
	}
	wg.Wait()
}

// keepMap parses the source map of script, and indexes its original files
// of the site's own.
func (r *resolver) keepMap(script string, b []byte) {
	m, err := sourcemap.Parse("", b)
	if err != nil {
		return
	}
	r.maps[script] = m
	r.mapCode[script] = mapSources(b)
}

// maxMapSources bounds the original files indexed of one map.
const maxMapSources = 64

// mapSources indexes the original files of a source map that are the
// site's own (no library's, not under node_modules), from its
// sourcesContent; none when the map holds no content.
func mapSources(b []byte) []*compare.CodeSource {
	var m struct {
		Sources        []string  `json:"sources"`
		SourcesContent []*string `json:"sourcesContent"`
	}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	var out []*compare.CodeSource
	for i, src := range m.Sources {
		if i >= len(m.SourcesContent) || len(out) >= maxMapSources {
			break
		}
		if m.SourcesContent[i] == nil || sourceLibrary(src) != "" {
			continue
		}
		c := compare.NewCodeSource(pageString(cleanSource(src)))
		c.AddText(1, *m.SourcesContent[i])
		if !c.Empty() {
			out = append(out, c)
		}
	}
	return out
}

// code is the site's own code the audit read, for content no frame of the
// site's own code wrote: the original files of its scripts' maps, its
// scripts without a map, and the HTML of the document at docURL (the page,
// or the one a navigation left), else of the page.
func (r *resolver) code(docURL string) []*compare.CodeSource {
	var out []*compare.CodeSource
	for _, script := range slices.Sorted(maps.Keys(r.scripts)) {
		sb := r.scripts[script]
		switch {
		case sb.library != "":
		case r.mapCode[script] != nil:
			out = append(out, r.mapCode[script]...)
		case sb.code != nil && r.maps[script] == nil:
			out = append(out, sb.code)
		}
	}
	d := r.docs[withoutFragment(docURL)]
	if d == nil {
		d = r.docs[r.doc]
	}
	if d != nil {
		out = append(out, d)
	}
	return out
}

// dataMapBytes is the JSON of an inline (data: URL) source map, nil when
// it is not one.
func dataMapBytes(dataURL string) []byte {
	meta, payload, ok := strings.Cut(strings.TrimPrefix(dataURL, "data:"), ",")
	if !ok || !strings.Contains(meta, "json") {
		return nil
	}
	if strings.HasSuffix(meta, ";base64") {
		b, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return nil
		}
		return b
	}
	s, err := url.PathUnescape(payload)
	if err != nil {
		return nil
	}
	return []byte(s)
}

// errMapRefused is fetchMap's error for a map the rules refused.
var errMapRefused = errors.New("source map refused")

// fetchMap fetches an external source map through the audit's proxy.
func (a *audit) fetchMap(ctx context.Context, raw string) ([]byte, error) {
	u, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, mapFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, */*;q=0.8")
	req.Header.Set("Sec-Fetch-Dest", "empty")
	w := &mapWriter{header: http.Header{}}
	a.t.proxy.serveRequest(w, req, u, u.String())
	a.sourceMaps.Add(1)
	switch {
	case w.header.Get(refusedHeader) != "":
		return nil, fmt.Errorf("%w: %s", errMapRefused, w.header.Get(refusedHeader))
	case w.status != http.StatusOK:
		return nil, fmt.Errorf("source map: status %d", w.status)
	case w.over:
		return nil, fmt.Errorf("source map: over %d bytes", maxReadBody)
	}
	return w.body, nil
}

// mapWriter is the ResponseWriter of a source map's fetch: it keeps at
// most maxReadBody bytes.
type mapWriter struct {
	header http.Header
	status int
	body   []byte
	over   bool
}

func (w *mapWriter) Header() http.Header { return w.header }

func (w *mapWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *mapWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if len(w.body)+len(p) > maxReadBody {
		w.over = true
		return 0, errors.New("source map too large")
	}
	w.body = append(w.body, p...)
	return len(p), nil
}
