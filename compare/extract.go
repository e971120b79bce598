package compare

import (
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Options tune ExtractWith.
type Options struct {
	// BotToken is the auditing bot's robots product token: robots metas and
	// X-Robots-Tag rules addressed to it count for Noindex and Nofollow like
	// generic ones. "" means DefaultBotToken.
	BotToken string
	// Now is the clock unavailable_after dates are judged by: a date before
	// it counts as noindex. Zero means the snapshot's own (Snapshot.Clock:
	// the Date header, else the time of the fetch); without either such
	// dates are recorded but not judged. An audit passes one clock for
	// both lanes, so a static page is judged the same in each.
	Now time.Time
}

// Extract reads a lane's snapshot into a Page. Both lanes use it. A nil
// snapshot gives an empty Page. Robots rules are read for DefaultBotToken.
func Extract(s *Snapshot) *Page {
	return ExtractWith(s, Options{})
}

// ExtractWith is Extract with options. It never fails: what a broken or
// hostile document does not yield stays empty, and caps are named in
// Page.Truncated. The body is parsed only when ContentType is empty or HTML.
func ExtractWith(s *Snapshot, opts Options) *Page {
	p := &Page{
		Hreflang:         []Alternate{},
		H1:               []string{},
		Headings:         []Heading{},
		Links:            []Link{},
		ImagesMissingAlt: []string{},
		JSONLD:           []JSONLD{},
		JSONLDTypes:      []string{},
	}
	if s == nil {
		return p
	}
	token := opts.BotToken
	if token == "" {
		token = DefaultBotToken
	}
	x := &extractor{page: p, t: truncation{}, token: strings.ToLower(token), lane: s.Lane, now: opts.Now}
	if x.now.IsZero() {
		x.now = s.Clock()
	}
	pageURL := s.FinalURL
	if pageURL == "" {
		pageURL = s.RequestedURL
	}
	if u, err := url.Parse(pageURL); err == nil && u.IsAbs() {
		x.pageURL, x.base = u, u
		x.pageKey = normURL(pageURL)
	}
	if s.Render != nil {
		x.listenerMark = s.Render.ListenerMark
		if s.Render.WriteMark != "" || len(s.Render.FieldWrites) > 0 {
			x.writeMark, x.nWrites = s.Render.WriteMark, len(s.Render.Writes)
			x.writes = newPageWrites()
			p.writes = x.writes
			if i, ok := s.Render.FieldWrites["title"]; ok && i >= 0 && i < x.nWrites {
				x.writes.head[fieldTitle] = i
			}
			if i, ok := s.Render.FieldWrites["lang"]; ok && i >= 0 && i < x.nWrites {
				x.writes.head[fieldLang] = i
			}
		}
	}
	x.headers(s.Header)
	if IsHTML(s.ContentType) {
		root, deep := parseDocument(s.Body, s.Lane == LaneRender)
		p.DeepNesting = deep
		if root != nil {
			x.document(root)
		}
	}
	x.finish()
	return p
}

// blankToEmpty returns "" for a string of nothing but Unicode spaces
// (U+00A0 and the like, which collapse keeps), else s.
func blankToEmpty(s string) string {
	if strings.TrimFunc(s, unicode.IsSpace) == "" {
		return ""
	}
	return s
}

// IsHTML reports whether a media type (parameters allowed) is one the
// extractor parses: HTML, XHTML, or none given.
func IsHTML(ct string) bool {
	ct, _, _ = strings.Cut(ct, ";")
	switch strings.ToLower(strings.TrimSpace(ct)) {
	case "", "text/html", "application/xhtml+xml":
		return true
	}
	return false
}

// extractor holds the state of one Extract call.
type extractor struct {
	page  *Page
	t     truncation
	token string
	lane  Lane
	now   time.Time
	// pageURL is the final URL; base is the document base (<base href>).
	pageURL, base *url.URL
	// pageKey is pageURL without its fragment, as normURL writes it: a
	// link to it is a link to the page itself.
	pageKey string
	// listenerMark is the attribute the render lane set on elements with
	// event listeners (RenderDetails.ListenerMark), "" for none.
	listenerMark string
	// writeMark is the attribute the render lane set on elements scripts
	// wrote (RenderDetails.WriteMark), nWrites the number of writes it
	// indexes, and writes what the fields came from; nil without marks.
	writeMark string
	nWrites   int
	writes    *pageWrites

	robotsMeta []string
	// tokenMeta holds the contents of robots metas named for the bot's token.
	tokenMeta  []string
	xRobots    []xRobotsRule
	canonicals []string
	// canonicalHrefs are the hrefs of the head canonicals as written.
	canonicalHrefs []string
	words          wordCounter
	// lead and mainLead gather the start of the body's and of the main
	// element's text; mainWords counts the main element's words.
	lead, mainLead strings.Builder
	mainWords      wordCounter
	hasMain        bool
	linkKeys       map[uint64]struct{}
	jsonLDTypes    map[string]bool
}

// headers reads X-Robots-Tag and the Link header canonical.
func (x *extractor) headers(h Header) {
	for _, v := range h.Values("X-Robots-Tag") {
		x.xRobots = append(x.xRobots, parseXRobotsTag(v, x.now)...)
		if len(x.page.XRobotsTag) >= maxXRobotsTag {
			x.t.mark("x_robots_tag")
			continue
		}
		x.page.XRobotsTag = append(x.page.XRobotsTag, x.t.cleanText("x_robots_tag", v, maxText))
	}
	for _, v := range h.Values("Link") {
		for _, lv := range parseLinkHeader(v) {
			switch {
			case lv.hasRel("canonical") && x.page.CanonicalHeader == "" && x.page.CanonicalHeaderHref == "":
				resolved, written := x.canonicalURL(x.pageURL, lv.target, "canonical_header")
				x.page.CanonicalHeader, x.page.CanonicalHeaderHref = resolved, written
			case lv.hasRel("alternate") && lv.hreflang != nil:
				x.alternate(*lv.hreflang, lv.target, true, x.pageURL, true)
			}
		}
	}
}

// canonicalURL reads a canonical href: the resolved URL when it is one
// (an empty path written as "/", as browsers do, so that the element and
// the Link header compare as URLs), and the href as written when it is not
// an absolute http(s) URL (then resolved is "" for what is no URL at all).
func (x *extractor) canonicalURL(base *url.URL, href, field string) (resolved, written string) {
	href = strings.TrimSpace(href)
	switch urlKind(href) {
	case urlAbsolute:
		return hrefForm(x.resolve(base, href, field, false)), ""
	case urlRelative:
		w, _ := clip(href, maxURL)
		return hrefForm(x.resolve(base, href, field, false)), w
	}
	w, _ := clip(href, maxURL)
	return "", w
}

// inBody reports whether an element sits inside <body>, where search
// engines ignore canonical and hreflang links.
func inBody(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Namespace == "" {
			switch p.DataAtom {
			case atom.Body:
				return true
			case atom.Head, atom.Html:
				return false
			}
		}
	}
	return false
}

// document reads everything from the parsed document: the head signals in
// one selector pass (document order, so the first title or base wins), then
// the body in one walk.
func (x *extractor) document(root *html.Node) {
	doc := goquery.NewDocumentFromNode(root)
	var metas, links, scripts []*goquery.Selection
	titled, based, langed := false, false, false
	doc.Find("html, base[href], title, meta, link, script").Each(func(_ int, s *goquery.Selection) {
		n := s.Get(0)
		if n.Namespace != "" {
			return
		}
		switch n.DataAtom {
		case atom.Html:
			if !langed {
				langed = true
				x.noteWrite(fieldLang, n)
				x.page.Lang = x.t.cleanText("lang", attr(n, "lang"), 64)
			}
		case atom.Base:
			if !based && x.base != nil {
				based = true
				if u, err := x.base.Parse(strings.TrimSpace(attr(n, "href"))); err == nil {
					x.base = u
				}
			}
		case atom.Title:
			if inBody(n) {
				x.page.robotsTitleInBody++
			}
			if titled {
				x.page.OtherTitles = x.other(x.page.OtherTitles, "title", s.Text())
				break
			}
			titled = true
			x.noteWrite(fieldTitle, n)
			x.page.Title = blankToEmpty(x.t.cleanText("title", s.Text(), maxText))
		case atom.Meta:
			metas = append(metas, s)
		case atom.Link:
			links = append(links, s)
		case atom.Script:
			scripts = append(scripts, s)
		}
	})
	// URLs resolve against <base>, wherever it stands, so these come after.
	for _, s := range metas {
		x.meta(s)
	}
	for _, s := range links {
		x.linkElement(s)
	}
	for _, s := range scripts {
		x.script(s)
	}
	x.walk(root)
}

// resolve resolves ref against base and returns it as a capped string with
// a lower-case host and no default port, or "" when ref is empty or not a URL. With link set, only http(s) targets are
// kept and the fragment is dropped.
func (x *extractor) resolve(base *url.URL, ref, field string, link bool) string {
	out, cut := resolveRef(base, ref, link)
	if cut {
		x.t.mark(field)
	}
	return out
}

// resolveRef is resolve without the truncation mark: the URL and whether
// it was cut to maxURL.
func resolveRef(base *url.URL, ref string, link bool) (string, bool) {
	ref = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, strings.TrimSpace(ref))
	if ref == "" {
		return "", false
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", false
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if link {
		if u.Scheme != "http" && u.Scheme != "https" && (base != nil || u.Scheme != "") {
			return "", false
		}
		u.Fragment, u.RawFragment = "", ""
	}
	// Hosts are case-insensitive and default ports redundant, so
	// HTTP://Shop.Example:80/ and http://shop.example/ compare equal.
	u.Host = strings.ToLower(u.Host)
	if u.Scheme == "http" {
		u.Host = strings.TrimSuffix(u.Host, ":80")
	} else if u.Scheme == "https" {
		u.Host = strings.TrimSuffix(u.Host, ":443")
	}
	return clip(u.String(), maxURL)
}

// finish derives the fields that need the whole document.
func (x *extractor) finish() {
	p := x.page
	p.MetaRobots = x.t.cleanText("meta_robots", strings.Join(x.robotsMeta, ", "), maxText)
	var d directives
	for _, c := range slices.Concat(x.robotsMeta, x.tokenMeta) {
		d = d.or(parseDirectives(c, x.now))
	}
	for _, r := range x.xRobots {
		if r.agent == "" || r.agent == x.token {
			d = d.or(r.d)
		}
	}
	p.Noindex, p.Nofollow = d.noindex, d.nofollow
	p.UnavailableAfter, _ = clip(d.unavailableAfter, 128)
	p.Expired = d.expired
	if len(x.canonicalHrefs) > 0 {
		p.CanonicalHref = x.canonicalHrefs[0]
	}
	if len(x.canonicals) > 0 {
		p.Canonical = x.canonicals[0]
		for _, c := range x.canonicals[1:] {
			if c != p.Canonical {
				p.CanonicalConflict = true
			}
		}
	}
	for typ := range x.jsonLDTypes {
		p.JSONLDTypes = append(p.JSONLDTypes, typ)
	}
	slices.Sort(p.JSONLDTypes)
	p.WordCount = x.words.total
	p.words = x.words.keys
	if x.words.full {
		x.t.mark("words")
	}
	p.linkKeys = x.linkKeys
	p.lead = collapse(x.lead.String())
	if x.hasMain {
		p.lead, p.mainWords, p.hasMain = collapse(x.mainLead.String()), x.mainWords.total, true
	}
	for f := range x.t {
		p.Truncated = append(p.Truncated, f)
	}
	slices.Sort(p.Truncated)
}
