package compare

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// collector gathers the text of an open <a> or heading element.
type collector struct {
	n    *html.Node
	text strings.Builder
	// alt is the alt text of the first image inside a link.
	alt string
	// lang is the language in force on the first of its text nodes that
	// has one (langSet); mixed says a later one's primary subtag differs.
	lang           string
	langSet, mixed bool
}

// see notes the language in force on one of the collector's text nodes;
// "" (no language known there) tells nothing.
func (c *collector) see(lang string) {
	switch {
	case lang == "":
	case !c.langSet:
		c.lang, c.langSet = lang, true
	case primaryTag(c.lang) != primaryTag(lang):
		c.mixed = true
	}
}

// textLang is the language of the collector's text: the one in force on
// the elements holding it, "" (every language) when they disagree, and
// else inherited, the lang in force on the element itself.
func (c *collector) textLang(inherited string) string {
	switch {
	case c.mixed:
		return ""
	case c.langSet:
		return c.lang
	}
	return inherited
}

// langScope is an element with a lang attribute, open during the walk.
type langScope struct {
	n    *html.Node
	lang string
}

// markScope is an element a script wrote (its write mark), open during the walk.
type markScope struct {
	n     *html.Node
	write int
}

// maxCollectors bounds the open link and heading elements whose text is
// gathered at once; the parser rarely nests them more than two deep.
const maxCollectors = 8

// walk visits the document once, in order, without recursion (so any depth
// is safe), collecting visible words, links, headings and images without alt.
func (x *extractor) walk(root *html.Node) {
	var open []*collector
	var langs []langScope  // elements with a lang attribute, innermost last
	var hidden *html.Node  // outermost element with the hidden attribute
	var marked []markScope // elements a script wrote, innermost last
	var main *html.Node    // the first main element, while the walk is in it
	x.mainWords.countOnly = true
	lang := func() string {
		if len(langs) == 0 {
			return ""
		}
		return langs[len(langs)-1].lang
	}
	n := root
	for n != nil {
		descend := true
		switch n.Type {
		case html.TextNode:
			if hidden == nil {
				x.words.add(n.Data)
				if len(marked) > 0 {
					if c := x.writes.wordsOf(marked[len(marked)-1].write); c != nil {
						c.add(n.Data)
					}
				}
				x.addLead(n.Data, main != nil)
			}
			blank := len(open) == 0 || strings.TrimSpace(n.Data) == ""
			for _, c := range open {
				if c.text.Len() < 4*maxText {
					c.text.WriteString(n.Data)
				}
				if !blank {
					c.see(lang())
				}
			}
		case html.ElementNode:
			if l, ok := langAttr(n); ok {
				langs = append(langs, langScope{n, strings.TrimSpace(l)})
			}
			if i := x.writeOf(n); i >= 0 {
				marked = append(marked, markScope{n, i})
			}
			descend = x.enter(n)
			if descend && hidden == nil && isHidden(n) {
				hidden = n
			}
			if descend && !x.hasMain && isMain(n) {
				main, x.hasMain = n, true
			}
			if descend && len(open) < maxCollectors && (x.isAnchor(n) || headingLevel(n) > 0) {
				open = append(open, &collector{n: n})
			}
			if n.DataAtom == atom.Img && n.Namespace == "" {
				for _, c := range open {
					if c.alt == "" && c.n.DataAtom == atom.A {
						c.alt = attr(n, "alt")
					}
				}
			}
		}
		if descend && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		// Leave n and every ancestor that has no next sibling.
		for n != nil {
			if len(open) > 0 && open[len(open)-1].n == n {
				write := -1
				if len(marked) > 0 {
					write = marked[len(marked)-1].write
				}
				x.leave(open[len(open)-1], lang(), write)
				open = open[:len(open)-1]
			}
			if len(marked) > 0 && marked[len(marked)-1].n == n {
				marked = marked[:len(marked)-1]
			}
			if hidden == n {
				hidden = nil
			}
			if main == n {
				main = nil
			}
			if len(langs) > 0 && langs[len(langs)-1].n == n {
				langs = langs[:len(langs)-1]
			}
			if n == root {
				n = nil
				break
			}
			if n.NextSibling != nil {
				n = n.NextSibling
				break
			}
			n = n.Parent
		}
	}
}

// enter handles an element as the walk reaches it and says whether to visit
// its children.
func (x *extractor) enter(n *html.Node) bool {
	if n.Namespace != "" {
		return true
	}
	switch n.DataAtom {
	case atom.Head, atom.Script, atom.Style, atom.Iframe, atom.Noembed, atom.Noframes:
		return false
	case atom.Template:
		// Declarative shadow roots (how a browser serializes open shadow
		// roots) are rendered; other templates are inert.
		return hasAttr(n, "shadowrootmode") || hasAttr(n, "shadowroot")
	case atom.Noscript:
		// With scripting on (render lane) noscript content is never shown.
		return x.lane != LaneRender
	case atom.Img:
		if !hasAttr(n, "alt") {
			x.imageMissingAlt(n)
		}
	}
	return true
}

// leave finishes a link or heading once all its text is in; lang is the
// language in force on the element, write the script write that brought it
// (-1: none known).
func (x *extractor) leave(c *collector, lang string, write int) {
	n := c.n
	if level := headingLevel(n); level > 0 {
		h1, hs := len(x.page.H1), len(x.page.Headings)
		x.heading(level, c.text.String())
		if x.writes != nil {
			if len(x.page.H1) > h1 {
				x.writes.h1 = append(x.writes.h1, write)
			}
			if len(x.page.Headings) > hs {
				x.writes.headings = append(x.writes.headings, write)
			}
		}
		return
	}
	raw, hasHref := anchorHref(n)
	href := strings.TrimSpace(raw)
	if reason := x.uncrawlable(n, href, hasHref); reason != "" {
		x.addUncrawlable(c, href, reason)
		return
	}
	if href == "" || strings.HasPrefix(href, "#") {
		return
	}
	resolved := x.resolve(x.base, href, "links", true)
	if resolved == "" {
		return
	}
	x.page.LinkCount++
	if x.linkKeys == nil {
		x.linkKeys = map[uint64]struct{}{}
	}
	if len(x.linkKeys) < maxLinkKeys {
		x.linkKeys[hashString(resolved)] = struct{}{}
	}
	if x.writes != nil && write >= 0 {
		x.writes.linked(write, hashString(resolved))
	}
	if len(x.page.Links) >= maxLinks {
		x.t.mark("links")
		return
	}
	text := x.t.cleanText("links", c.text.String(), maxAnchorText)
	for _, fallback := range []string{c.alt, attr(n, "aria-label"), attr(n, "title")} {
		if text != "" {
			break
		}
		text = x.t.cleanText("links", fallback, maxAnchorText)
	}
	rel := x.t.cleanText("links", strings.ToLower(attr(n, "rel")), 64)
	x.page.Links = append(x.page.Links, Link{
		Href:     resolved,
		Rel:      rel,
		Text:     text,
		Internal: x.isInternal(resolved),
		// As Lighthouse judges link text: not for nofollow links (crawlers
		// do not follow them) nor for links to the page itself.
		NonDescriptive: !hasToken(rel, "nofollow") && normURL(resolved) != x.pageKey &&
			isNonDescriptive(text, c.textLang(lang)),
	})
}

// hasToken reports whether the space-separated list s holds tok.
func hasToken(s, tok string) bool {
	for _, f := range strings.Fields(s) {
		if f == tok {
			return true
		}
	}
	return false
}

// langAttr returns an element's lang (or xml:lang) attribute.
func langAttr(n *html.Node) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == "lang" && (a.Namespace == "" || a.Namespace == "xml") {
			return a.Val, true
		}
	}
	return "", false
}

// heading records one h1–h6.
func (x *extractor) heading(level int, text string) {
	text = x.t.cleanText("headings", text, maxText)
	if level == 1 {
		if len(x.page.H1) < maxH1 {
			x.page.H1 = append(x.page.H1, text)
		} else {
			x.t.mark("h1")
		}
	}
	if len(x.page.Headings) >= maxHeadings {
		x.t.mark("headings")
		return
	}
	x.page.Headings = append(x.page.Headings, Heading{Level: level, Text: text})
}

// imageMissingAlt records an <img> without an alt attribute.
func (x *extractor) imageMissingAlt(n *html.Node) {
	if len(x.page.ImagesMissingAlt) >= maxImages {
		x.t.mark("images_missing_alt")
		return
	}
	src := x.resolve(x.base, attr(n, "src"), "images_missing_alt", false)
	if src == "" {
		src, _ = clip(strings.TrimSpace(attr(n, "src")), maxURL)
	}
	x.page.ImagesMissingAlt = append(x.page.ImagesMissingAlt, src)
}

// isInternal reports whether a resolved href is on the page's own host.
func (x *extractor) isInternal(href string) bool {
	if x.pageURL == nil {
		return !strings.Contains(href, "://")
	}
	rest, ok := strings.CutPrefix(href, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(href, "https://")
	}
	if !ok {
		return false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host := rest[:end]
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	if strings.HasPrefix(host, "[") {
		if i := strings.IndexByte(host, ']'); i >= 0 {
			host = host[1:i]
		}
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	return strings.EqualFold(host, x.pageURL.Hostname())
}

// headingLevel returns 1–6 for an HTML h1–h6 element, else 0.
func headingLevel(n *html.Node) int {
	if n.Namespace != "" {
		return 0
	}
	switch n.DataAtom {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// isHidden reports whether an element carries the hidden attribute in its
// hiding state (hidden="until-found" content stays findable, so it counts).
func isHidden(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == "hidden" {
			return !strings.EqualFold(strings.TrimSpace(a.Val), "until-found")
		}
	}
	return false
}

// attr returns the value of an attribute without namespace, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hasAttr reports whether n has the attribute.
func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}

// isMain reports whether n holds the page's main content: <main> or an
// element with role=main.
func isMain(n *html.Node) bool {
	return n.Namespace == "" && (n.DataAtom == atom.Main || strings.EqualFold(strings.TrimSpace(attr(n, "role")), "main"))
}

// addLead adds one visible text node to the start of the body's text and,
// inMain, of the main element's, each kept to about maxLead bytes.
func (x *extractor) addLead(s string, inMain bool) {
	if x.lead.Len() >= maxLead && (!inMain || x.mainLead.Len() >= maxLead) {
		if inMain {
			x.mainWords.add(s)
		}
		return
	}
	s = collapse(s)
	add := func(b *strings.Builder) {
		if b.Len() >= maxLead || s == "" {
			return
		}
		t, _ := clip(s, maxLead-b.Len())
		b.WriteString(t)
		b.WriteByte(' ')
	}
	add(&x.lead)
	if inMain {
		add(&x.mainLead)
		x.mainWords.add(s)
	}
}
