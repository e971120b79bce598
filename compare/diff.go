package compare

import (
	"maps"
	"slices"
	"strings"
)

// Diff compares what the plain lane saw with what the render lane saw.
// Either may be nil when that lane produced no document; Diff then reports
// only single-lane findings. An Observed without a Page is extracted from its
// Snapshot. The output is deterministic: rows in a fixed field order,
// findings sorted by severity, code, lane and message.
func Diff(plain, render *Observed) Result {
	d := &differ{p: observe(plain), r: observe(render)}
	d.shares()
	res := Result{Diff: d.rows(), Findings: d.findings()}
	res.Verdict = d.verdict(res.Findings)
	return res
}

// side is one lane as Diff sees it; page is nil when the lane is missing.
type side struct {
	snap *Snapshot
	page *Page
}

// observe turns an Observed into a side, extracting the page if needed.
func observe(o *Observed) side {
	if o == nil {
		return side{}
	}
	s := side{snap: o.Snapshot, page: o.Page}
	if s.page == nil && s.snap != nil {
		s.page = Extract(s.snap)
	}
	return s
}

// differ holds one Diff call.
type differ struct {
	p, r side
	// sharedWords is the number of rendered words the plain lane also has.
	sharedWords int
	// textShare and linkShare are the verdict's shares.
	textShare, linkShare float64
	// renderOnlyLinks and plainOnlyLinks are distinct hrefs in one lane only.
	renderOnlyLinks, plainOnlyLinks int
	// head is the scan of the server HTML's head (headEnd), once scanned.
	head        *headEnd
	headScanned bool
}

// shares computes the text and link shares.
func (d *differ) shares() {
	p, r := d.p.page, d.r.page
	d.textShare, d.linkShare = 1, 1
	switch {
	case r == nil:
		return
	case p == nil:
		if r.WordCount > 0 {
			d.textShare = 0
		}
		if len(linkSet(r)) > 0 {
			d.linkShare = 0
		}
		return
	}
	d.sharedWords = sharedWords(p, r)
	d.textShare = ratio(d.sharedWords, r.WordCount)
	pl, rl := linkSet(p), linkSet(r)
	for k := range rl {
		if _, ok := pl[k]; !ok {
			d.renderOnlyLinks++
		}
	}
	for k := range pl {
		if _, ok := rl[k]; !ok {
			d.plainOnlyLinks++
		}
	}
	d.linkShare = ratio(len(rl)-d.renderOnlyLinks, len(rl))
}

// ratio returns n/total, or 1 when total is 0.
func ratio(n, total int) float64 {
	if total <= 0 {
		return 1
	}
	return min(float64(n)/float64(total), 1)
}

// sharedWords counts the words both pages have, each word as often as the
// page that has it fewer times. For pages decoded from JSON (no word counts)
// it assumes the smaller text is part of the larger.
func sharedWords(p, r *Page) int {
	if p.words == nil || r.words == nil {
		return min(p.WordCount, r.WordCount)
	}
	a, b := p.words, r.words
	if len(b) < len(a) {
		a, b = b, a
	}
	n := 0
	for k, x := range a {
		n += int(min(x, b[k]))
	}
	return n
}

// linkSet returns the hashes of a page's distinct link hrefs.
func linkSet(p *Page) map[uint64]struct{} {
	if p.linkKeys != nil || len(p.Links) == 0 {
		return p.linkKeys
	}
	m := make(map[uint64]struct{}, len(p.Links))
	for _, l := range p.Links {
		m[hashString(l.Href)] = struct{}{}
	}
	return m
}

// field describes one row of the side-by-side table.
type field struct {
	name  string
	value func(side) any
	empty func(side) bool
	equal func(p, r side) bool
}

// fields are the rows of the table, in report order.
var fields = []field{
	{"status", func(s side) any { return s.snap.Status },
		func(s side) bool { return s.snap.Status == 0 },
		func(p, r side) bool { return p.snap.Status == r.snap.Status }},
	{"final_url", func(s side) any { return strings.ToValidUTF8(s.snap.FinalURL, "\uFFFD") },
		func(s side) bool { return s.snap.FinalURL == "" },
		func(p, r side) bool { return p.snap.FinalURL == r.snap.FinalURL }},
	stringField("title", func(p *Page) string { return p.Title }),
	stringField("meta_description", func(p *Page) string { return p.MetaDescription }),
	stringField("meta_robots", func(p *Page) string { return p.MetaRobots }),
	{"bot_robots", func(s side) any { return s.page.BotRobots },
		func(s side) bool { return len(s.page.BotRobots) == 0 },
		func(p, r side) bool { return maps.Equal(p.page.BotRobots, r.page.BotRobots) }},
	{"x_robots_tag", func(s side) any { return s.page.XRobotsTag },
		func(s side) bool { return len(s.page.XRobotsTag) == 0 },
		func(p, r side) bool { return slices.Equal(p.page.XRobotsTag, r.page.XRobotsTag) }},
	boolField("noindex", func(p *Page) bool { return p.Noindex }),
	boolField("nofollow", func(p *Page) bool { return p.Nofollow }),
	stringField("canonical", func(p *Page) string { return p.Canonical }),
	stringField("canonical_header", func(p *Page) string { return p.CanonicalHeader }),
	{"lang", func(s side) any { return s.page.Lang },
		func(s side) bool { return s.page.Lang == "" },
		func(p, r side) bool { return strings.EqualFold(p.page.Lang, r.page.Lang) }},
	{"hreflang", func(s side) any { return s.page.Hreflang },
		func(s side) bool { return len(s.page.Hreflang) == 0 },
		func(p, r side) bool { return slices.Equal(alternateKeys(p.page), alternateKeys(r.page)) }},
	{"h1", func(s side) any { return s.page.H1 },
		func(s side) bool { return len(s.page.H1) == 0 },
		func(p, r side) bool { return slices.Equal(p.page.H1, r.page.H1) }},
	{"headings", func(s side) any { return len(s.page.Headings) },
		func(s side) bool { return len(s.page.Headings) == 0 },
		func(p, r side) bool { return slices.Equal(p.page.Headings, r.page.Headings) }},
	// links counts distinct addresses, as the link findings and the link
	// share do, so the table and the findings give one count.
	{"links", func(s side) any { return len(linkSet(s.page)) },
		func(s side) bool { return len(linkSet(s.page)) == 0 },
		func(p, r side) bool { return maps.Equal(linkSet(p.page), linkSet(r.page)) }},
	{"json_ld_types", func(s side) any { return s.page.JSONLDTypes },
		func(s side) bool { return len(s.page.JSONLDTypes) == 0 },
		func(p, r side) bool { return slices.Equal(p.page.JSONLDTypes, r.page.JSONLDTypes) }},
	{"images_missing_alt", func(s side) any { return len(s.page.ImagesMissingAlt) },
		func(s side) bool { return len(s.page.ImagesMissingAlt) == 0 },
		func(p, r side) bool { return slices.Equal(p.page.ImagesMissingAlt, r.page.ImagesMissingAlt) }},
	{"open_graph", func(s side) any { return s.page.OpenGraph },
		func(s side) bool { return s.page.OpenGraph == OpenGraph{} },
		func(p, r side) bool { return p.page.OpenGraph == r.page.OpenGraph }},
	{"word_count", func(s side) any { return s.page.WordCount },
		func(s side) bool { return s.page.WordCount == 0 },
		func(p, r side) bool {
			if p.page.words != nil && r.page.words != nil {
				return p.page.WordCount == r.page.WordCount && maps.Equal(p.page.words, r.page.words)
			}
			return p.page.WordCount == r.page.WordCount
		}},
}

// stringField is a row holding one string of the Page.
func stringField(name string, get func(*Page) string) field {
	return field{name,
		func(s side) any { return get(s.page) },
		func(s side) bool { return get(s.page) == "" },
		func(p, r side) bool { return get(p.page) == get(r.page) }}
}

// boolField is a row holding one flag of the Page; false counts as empty.
func boolField(name string, get func(*Page) bool) field {
	return field{name,
		func(s side) any { return get(s.page) },
		func(s side) bool { return !get(s.page) },
		func(p, r side) bool { return get(p.page) == get(r.page) }}
}

// alternateKeys returns a page's hreflang alternates as sorted strings.
func alternateKeys(p *Page) []string {
	keys := make([]string, len(p.Hreflang))
	for i, a := range p.Hreflang {
		keys[i] = strings.ToLower(a.Lang) + " " + a.Href
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// present reports whether a side has what field f reads.
func (s side) present(f field) bool {
	if f.name == "status" || f.name == "final_url" {
		return s.snap != nil
	}
	return s.page != nil
}

// rows builds the side-by-side table. A missing lane's values are null.
func (d *differ) rows() []FieldDiff {
	if d.p.page == nil && d.r.page == nil && d.p.snap == nil && d.r.snap == nil {
		return []FieldDiff{}
	}
	out := make([]FieldDiff, 0, len(fields))
	for _, f := range fields {
		row := FieldDiff{Field: f.name}
		pe, re := true, true
		if d.p.present(f) {
			row.Plain, pe = f.value(d.p), f.empty(d.p)
		}
		if d.r.present(f) {
			row.Render, re = f.value(d.r), f.empty(d.r)
		}
		switch {
		case pe && re:
			row.Change = ChangeSame
		case d.p.present(f) && d.r.present(f) && f.equal(d.p, d.r):
			row.Change = ChangeSame
		case pe:
			row.Change = ChangeRenderOnly
		case re:
			row.Change = ChangePlainOnly
		default:
			row.Change = ChangeChanged
		}
		out = append(out, row)
	}
	return out
}
