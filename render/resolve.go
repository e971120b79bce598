package render

import (
	"context"
	"maps"
	"net/url"
	"strings"

	"lekta.dev/lekta/compare"
)

// resolveCauses names the code behind what the recorder and the network
// saw, once the page is done: each write's origin, the requester of each
// data response, and the origin (or response header) of each navigation a
// script made. It runs before the DOM snapshot, while the proxy is open.
func (a *audit) resolveCauses(ctx context.Context) {
	if a.opts.NoCauses {
		return
	}
	// Copies: the page may still make requests, whose events note more.
	a.inits.mu.Lock()
	byURL := maps.Clone(a.inits.byURL)
	navs := append([]initiatedNav(nil), a.inits.navs...)
	a.inits.mu.Unlock()
	b := &a.t.proxy.bodies
	a.waitBodies()
	b.mu.Lock()
	data := append([]*compare.DataResponse(nil), b.data...)
	moves := append([]headerMove(nil), b.moves...)
	b.mu.Unlock()
	var stacks [][]compare.Frame
	for _, w := range a.causes.writes {
		stacks = append(stacks, w.Stack)
	}
	r := a.newResolver(ctx, append(stacks, initiatorStacks(data, byURL, navs)...))
	for i := range a.causes.writes {
		w := &a.causes.writes[i]
		if o := r.origin(w.Stack); o != nil {
			w.Script, w.Inline, w.Line, w.Column = o.Script, o.Inline, o.Line, o.Column
			w.Source, w.Library, w.Own = o.Source, o.Library, o.Own
		}
	}
	for i := range a.causes.history {
		h := &a.causes.history[i]
		if wi := a.causes.historyWrites[i]; wi >= 0 && wi < len(a.causes.writes) {
			h.By = r.origin(a.causes.writes[wi].Stack)
		}
		h.Defined = redirectDefined(r, h)
	}
	for _, d := range data {
		d.By = r.origin(byURL[withoutFragment(d.URL)])
	}
	a.causes.data, a.causes.code = data, r.code(r.doc)
	a.rec.mu.Lock()
	for i := range a.rec.redirects {
		cr := &a.rec.redirects[i]
		if cr.Mechanism != compare.RedirectScript {
			continue
		}
		to := withoutFragment(cr.To)
		for _, n := range navs {
			if n.url == to {
				cr.By = r.origin(n.stack)
			}
		}
		for _, m := range moves {
			if movesTo(m, to) {
				cr.Header, cr.HeaderOf = m.header, pathOf(m.url)
			}
		}
		cr.Defined = redirectDefined(r, cr)
	}
	a.rec.mu.Unlock()
}

// redirectDefined is the line of the site's own code that names the
// target of a navigation no frame of the site's own code made and no
// response header asked for; nil otherwise.
func redirectDefined(r *resolver, cr *compare.ClientRedirect) *compare.SourcePos {
	if cr.Header != "" || cr.By != nil && cr.By.Own {
		return nil
	}
	return compare.RedirectLine(r.code(cr.From), pathOf(cr.From), pathOf(cr.To))
}

// initiatorStacks are the stacks of the requests whose origins a report
// may name: the data responses' and the navigations'.
func initiatorStacks(data []*compare.DataResponse, byURL map[string][]compare.Frame, navs []initiatedNav) [][]compare.Frame {
	var out [][]compare.Frame
	for _, d := range data {
		if st := byURL[withoutFragment(d.URL)]; st != nil {
			out = append(out, st)
		}
	}
	for _, n := range navs {
		out = append(out, n.stack)
	}
	return out
}

// movesTo reports whether a response header sent the page to target.
func movesTo(m headerMove, target string) bool {
	v := m.value
	if m.header == "Refresh" {
		v = refreshURL(v)
	}
	if m.header == "HX-Location" && len(v) > 0 && v[0] == '{' {
		return false
	}
	base, err := url.Parse(m.url)
	if err != nil || v == "" {
		return false
	}
	u, err := base.Parse(v)
	return err == nil && withoutFragment(u.String()) == target
}

// pathOf is a URL's path, or the URL when it does not parse.
func pathOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.EscapedPath()
	}
	return raw
}

// refreshURL is the URL of a Refresh header's value ("5; url=/next"), "".
func refreshURL(v string) string {
	_, rest, ok := strings.Cut(v, ";")
	if !ok {
		_, rest, ok = strings.Cut(v, ",")
		if !ok {
			return ""
		}
	}
	rest = strings.TrimSpace(rest)
	if len(rest) >= 4 && strings.EqualFold(rest[:3], "url") {
		rest = strings.TrimSpace(rest[3:])
		rest = strings.TrimSpace(strings.TrimPrefix(rest, "="))
	}
	return strings.Trim(rest, `"'`)
}
