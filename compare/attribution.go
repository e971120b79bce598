package compare

import (
	"cmp"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// pageWrites says which recorded script write (an index into
// RenderDetails.Writes, -1 for none) each field of a rendered page came
// from: the write that marked the field's element or its nearest marked
// ancestor (RenderDetails.WriteMark).
type pageWrites struct {
	// head is the write of each head field.
	head [headFields]int
	// h1, headings and jsonld run parallel to Page.H1, Page.Headings and
	// Page.JSONLD.
	h1, headings, jsonld []int
	// words counts the visible words each write brought; links the link
	// hrefs (by hash) each write brought.
	words map[int]*wordCounter
	links map[int]map[uint64]struct{}
}

// maxAttributedWrites bounds the writes words and links are kept for.
const maxAttributedWrites = 2000

// headField names a field of the head whose write pageWrites keeps.
type headField int

// The head fields, indexes of pageWrites.head.
const (
	fieldTitle headField = iota
	fieldDescription
	fieldRobots
	fieldCanonical
	fieldLang
	fieldOpenGraph
	fieldHreflang
	headFields
)

func newPageWrites() *pageWrites {
	w := &pageWrites{words: map[int]*wordCounter{}, links: map[int]map[uint64]struct{}{}}
	for f := range w.head {
		w.head[f] = -1
	}
	return w
}

// writeOf is the write that marked n itself, -1 when none did.
func (x *extractor) writeOf(n *html.Node) int {
	if x.writes == nil || n == nil {
		return -1
	}
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == x.writeMark {
			if i, err := strconv.Atoi(a.Val); err == nil && i >= 0 && i < x.nWrites {
				return i
			}
			return -1
		}
	}
	return -1
}

// writeAbove is the write that marked n or its nearest marked ancestor.
func (x *extractor) writeAbove(n *html.Node) int {
	if x.writes == nil {
		return -1
	}
	for ; n != nil; n = n.Parent {
		if i := x.writeOf(n); i >= 0 {
			return i
		}
	}
	return -1
}

// wordsOf is the word counter of write i, nil past the cap.
func (w *pageWrites) wordsOf(i int) *wordCounter {
	c := w.words[i]
	if c == nil && len(w.words) < maxAttributedWrites {
		c = &wordCounter{}
		w.words[i] = c
	}
	return c
}

// linked notes that write i brought the link with hash k.
func (w *pageWrites) linked(i int, k uint64) {
	s := w.links[i]
	if s == nil {
		if len(w.links) >= maxAttributedWrites {
			return
		}
		s = map[uint64]struct{}{}
		w.links[i] = s
	}
	if len(s) < maxLinks {
		s[k] = struct{}{}
	}
}

// at is the write i of a list that runs parallel to a page field, -1 when
// out of range.
func at(l []int, i int) int {
	if i < 0 || i >= len(l) {
		return -1
	}
	return l[i]
}

// writeCause is the cause of a render-only or changed field whose last
// write is i (-1: none recorded), nil when nothing is known.
func (d *differ) writeCause(i int) *Cause {
	rs := d.r.snap
	if rs == nil || rs.Render == nil {
		return nil
	}
	rd := rs.Render
	blocked := blockedScripts(rd)
	if i < 0 || i >= len(rd.Writes) {
		if c := lastDocumentRedirect(rd); c != nil {
			// The browser left the page: the field is the next page's.
			return c
		}
		if rd.WritesTampered {
			// The page replaced what the recorder wraps: some script
			// wrote the field, which one is unknown.
			return &Cause{Kind: CauseScript, BlockedScripts: blocked}
		}
		return nil
	}
	w := rd.Writes[i]
	c := &Cause{Kind: CauseScript, BlockedScripts: blocked}
	if w.Unknown || w.Script == "" {
		return c
	}
	c.setOrigin(&Origin{Script: w.Script, Inline: w.Inline, Line: w.Line, Column: w.Column, Source: w.Source, Library: w.Library, Own: w.Own || w.Library == ""})
	c.PageTimeMS = pageTimeMS(w.PageTime)
	c.EarlierWriters = w.Earlier
	return c
}

// blockedScripts counts the scripts the render lane did not run: those on
// the tracker list, and the .js files robots.txt or the request budget
// kept it from loading.
func blockedScripts(rd *RenderDetails) int {
	n := rd.Blocked["analytics"]
	for _, b := range rd.BlockedURLs {
		if b.Reason == "analytics" {
			continue
		}
		u, err := url.Parse(b.URL)
		if err != nil {
			continue
		}
		if ext := strings.ToLower(path.Ext(u.Path)); ext == ".js" || ext == ".mjs" {
			n++
		}
	}
	return n
}

// writes is the rendered page's field writes, or empty ones.
func (d *differ) writes() *pageWrites {
	if r := d.r.page; r != nil && r.writes != nil {
		return r.writes
	}
	return newPageWrites()
}

// shareCause names the script that brought most of what only the rendered
// page has: onlyOf(i) is how much of it write i brought. Writes of one
// script add up; the cause is that script's last write, with its share.
func (d *differ) shareCause(onlyOf func(i int) int, writes []int) *Cause {
	rs := d.r.snap
	if rs == nil || rs.Render == nil || len(writes) == 0 {
		return nil
	}
	type part struct {
		last, n int
	}
	byScript := map[string]*part{}
	total := 0
	for _, i := range writes {
		n := onlyOf(i)
		if n <= 0 || i >= len(rs.Render.Writes) {
			continue
		}
		total += n
		w := rs.Render.Writes[i]
		key := w.Script + "\x00" + w.Library
		p := byScript[key]
		if p == nil {
			p = &part{last: i}
			byScript[key] = p
		}
		p.n += n
		p.last = max(p.last, i)
	}
	if total == 0 {
		return nil
	}
	parts := make([]*part, 0, len(byScript))
	for _, p := range byScript {
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b *part) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.last, b.last)) })
	c := d.writeCause(parts[0].last)
	if c == nil {
		return nil
	}
	c.EarlierWriters = 0
	c.Share = float64(parts[0].n) / float64(total)
	return c
}

// textCause names the response that holds most of the render-only words,
// else the script that wrote most of them.
func (d *differ) textCause() *Cause {
	c := d.writerTextCause()
	words := d.renderOnlyWords()
	if m := d.bestData(words, nil, minDataShare); m != nil {
		return dataCause(m, c)
	}
	return d.definedIn(c, words, nil, minDataShare)
}

// writerTextCause names the script behind most of the render-only words.
func (d *differ) writerTextCause() *Cause {
	w, p := d.writes(), d.p.page
	var ids []int
	for i := range w.words {
		ids = append(ids, i)
	}
	slices.Sort(ids)
	return d.shareCause(func(i int) int {
		c := w.words[i]
		n := 0
		for k, x := range c.keys {
			have := uint32(0)
			if p != nil {
				have = p.words[k]
			}
			if x > have {
				n += int(x - have)
			}
		}
		return n
	}, ids)
}

// linkCause names the response that holds most of the render-only links,
// else the script that wrote most of them.
func (d *differ) linkCause() *Cause {
	c := d.writerLinkCause()
	links := d.renderOnlyLinkList()
	if m := d.bestData(nil, links, minDataShare); m != nil {
		return dataCause(m, c)
	}
	words, paths := linkWords(links)
	return d.definedIn(c, words, paths, minDataShare)
}

// writerLinkCause names the script behind most of the render-only links.
func (d *differ) writerLinkCause() *Cause {
	w := d.writes()
	plain := map[uint64]struct{}{}
	if d.p.page != nil {
		plain = linkSet(d.p.page)
	}
	var ids []int
	for i := range w.links {
		ids = append(ids, i)
	}
	slices.Sort(ids)
	return d.shareCause(func(i int) int {
		n := 0
		for k := range w.links[i] {
			if _, ok := plain[k]; !ok {
				n++
			}
		}
		return n
	}, ids)
}

// noteWrite keeps, for a head field, the write that marked n or an
// ancestor, unless an earlier element of the field had one.
func (x *extractor) noteWrite(f headField, n *html.Node) {
	if x.writes == nil || x.writes.head[f] >= 0 {
		return
	}
	x.writes.head[f] = x.writeAbove(n)
}

// jsonLDWith is the index of the first JSON-LD block of p declaring typ.
func jsonLDWith(p *Page, typ string) int {
	for i, b := range p.JSONLD {
		if slices.Contains(b.Types, typ) {
			return i
		}
	}
	return -1
}

// lastDocumentRedirect is the cause of the last navigation a script or a
// meta refresh made to another document, nil when there was none.
func lastDocumentRedirect(rd *RenderDetails) *Cause {
	for i := len(rd.ClientRedirects) - 1; i >= 0; i-- {
		r := rd.ClientRedirects[i]
		if r.Mechanism == RedirectScript || r.Mechanism == RedirectMetaRefresh {
			return clientRedirectCause(r)
		}
	}
	return nil
}
