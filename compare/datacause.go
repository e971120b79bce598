package compare

import "net/url"

// Where content came from: content only the rendered page has is
// attributed to the data response (RenderDetails.Data) that holds most of
// it, when one holds enough; the cause is then that request, named with
// the code that made it, and the share of the content the response holds.

// Shares a response must hold to be named as the source of content.
const (
	// minDataShare is for the render-only text and links as a whole.
	minDataShare = 0.3
	// minFieldShare is for one field's value (a title, a heading).
	minFieldShare = 0.6
)

// dataMatch is the response holding most of a set of words or links.
type dataMatch struct {
	resp  *DataResponse
	share float64
}

// bestData is the response that holds the largest share of the words (by
// key) or links, nil when none holds least or there is nothing to find. A
// link is held by a response that holds its URL or most of its text (an
// app builds "/p/7" from an id, its text comes as it is).
func (d *differ) bestData(words map[uint64]struct{}, links []Link, least float64) *dataMatch {
	rs := d.r.snap
	if rs == nil || rs.Render == nil || len(rs.Render.Data) == 0 || len(words)+len(links) == 0 {
		return nil
	}
	texts := make([]map[uint64]struct{}, len(links))
	for i, l := range links {
		texts[i] = wordKeys(l.Text)
	}
	var best *dataMatch
	for _, resp := range rs.Render.Data {
		n := resp.count(words)
		for i, l := range links {
			if _, ok := resp.links[l.Href]; ok || resp.holds(texts[i]) >= minFieldShare {
				n++
			}
		}
		share := float64(n) / float64(len(words)+len(links))
		if best == nil || share > best.share {
			best = &dataMatch{resp: resp, share: share}
		}
	}
	if best.share < least {
		return nil
	}
	return best
}

// count is how many of the words a response holds.
func (r *DataResponse) count(words map[uint64]struct{}) int {
	n := 0
	for k := range words {
		if _, ok := r.words[k]; ok {
			n++
		}
	}
	return n
}

// holds is the share of the words a response holds, 0 for none.
func (r *DataResponse) holds(words map[uint64]struct{}) float64 {
	if len(words) == 0 {
		return 0
	}
	return float64(r.count(words)) / float64(len(words))
}

// dataCause is the cause naming a matched response: the request, the code
// that made it, and the library that wrote its content (from writer, the
// cause of the write, which may be nil).
func dataCause(m *dataMatch, writer *Cause) *Cause {
	c := &Cause{Kind: CauseRequest, RequestPath: m.resp.Path, DataShare: roundShare(m.share)}
	if o := m.resp.By; o != nil {
		c.setOrigin(o)
		if o.Own {
			c.Library = ""
		}
	}
	if writer != nil {
		c.BlockedScripts = writer.BlockedScripts
		c.PageTimeMS = writer.PageTimeMS
		if writer.Library != "" {
			c.Library = writer.Library
		}
	}
	return c
}

// roundShare keeps two digits of a share.
func roundShare(s float64) float64 { return float64(int(s*100+0.5)) / 100 }

// wordKeys is the set of word keys of a value.
func wordKeys(s string) map[uint64]struct{} {
	var w wordCounter
	w.add(s)
	out := make(map[uint64]struct{}, len(w.keys))
	for k := range w.keys {
		out[k] = struct{}{}
	}
	return out
}

// fieldCause is the cause of a field whose rendered value is value and
// whose last write is i: the response that holds the value, else the write.
func (d *differ) fieldCause(i int, value string, isURL bool) *Cause {
	w := d.writeCause(i)
	if value == "" || w == nil || w.Kind == CauseRedirect {
		// No script wrote the field (nor any, as far as the recorder
		// knows): the content came with the document.
		return w
	}
	var m *dataMatch
	if isURL {
		m = d.bestData(nil, []Link{{Href: value}}, 1)
	} else {
		m = d.bestData(wordKeys(value), nil, minFieldShare)
	}
	if m == nil && isURL {
		if u, err := url.Parse(value); err == nil && u.Path != "" {
			return d.definedIn(w, nil, []string{u.Path}, minFieldShare)
		}
	}
	if m == nil {
		return d.definedIn(w, wordKeys(value), nil, minFieldShare)
	}
	return dataCause(m, w)
}

// ownCode reports whether a cause names a frame of the site's own code.
func (c *Cause) ownCode() bool {
	return c.Inline || c.Source != nil || c.ScriptURL != "" && c.Line > 0
}

// definedIn adds to a script cause that names no frame of the site's own
// code the line of the site's own code that holds most of the words, when
// a file holds least of them (Cause.Defined).
func (d *differ) definedIn(c *Cause, words map[uint64]struct{}, paths []string, least float64) *Cause {
	rs := d.r.snap
	if c == nil || c.Kind != CauseScript || c.ownCode() || rs == nil || rs.Render == nil {
		return c
	}
	if m := bestCode(rs.Render.Code, words, paths, least); m != nil {
		c.Defined = &SourcePos{File: m.src.File, Line: int(m.line)}
	}
	return c
}

// linkWords are the words of the links' texts, and their paths (as code
// quotes them: '/products').
func linkWords(links []Link) (map[uint64]struct{}, []string) {
	words := map[uint64]struct{}{}
	var paths []string
	for _, l := range links {
		for k := range wordKeys(l.Text) {
			words[k] = struct{}{}
		}
		if u, err := url.Parse(l.Href); err == nil && u.Host != "" && u.Path != "" {
			paths = append(paths, u.Path)
		}
	}
	return words, paths
}

// renderOnlyWords are the keys of the words the rendered page has more
// often than the server HTML.
func (d *differ) renderOnlyWords() map[uint64]struct{} {
	r, p := d.r.page, d.p.page
	out := map[uint64]struct{}{}
	if r == nil || r.words == nil {
		return out
	}
	for k, n := range r.words {
		have := uint32(0)
		if p != nil && p.words != nil {
			have = p.words[k]
		}
		if n > have {
			out[k] = struct{}{}
		}
	}
	return out
}

// renderOnlyLinkList is the links only the rendered page has, one per href.
func (d *differ) renderOnlyLinkList() []Link {
	r := d.r.page
	if r == nil {
		return nil
	}
	plain := map[uint64]struct{}{}
	if d.p.page != nil {
		plain = linkSet(d.p.page)
	}
	seen := map[string]bool{}
	var out []Link
	for _, l := range r.Links {
		if _, ok := plain[hashString(l.Href)]; !ok && !seen[l.Href] {
			seen[l.Href] = true
			out = append(out, l)
		}
	}
	return out
}
