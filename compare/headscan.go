package compare

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// headTag is a kind of tag that counts only in <head>.
type headTag int

// The head-only tags headScan follows, in the order a message lists them.
const (
	headTitle headTag = iota
	headCanonical
	headHreflang
	headDescription
	headRobots
	headTagKinds
)

// headTagCounts counts tags of each kind, with the line of the first.
type headTagCounts struct {
	n     [headTagKinds]int
	first [headTagKinds]int
}

// add counts one tag of kind k on line.
func (c *headTagCounts) add(k headTag, line int) {
	if c.n[k] == 0 {
		c.first[k] = line
	}
	c.n[k]++
}

// total is the number of tags counted.
func (c *headTagCounts) total() int {
	t := 0
	for _, n := range c.n {
		t += n
	}
	return t
}

// headEnd is what one tokeniser pass over the server HTML tells about
// where the HTML parser put the head-only tags.
type headEnd struct {
	// element is the token that ended the head early: a lower-case tag
	// name, or "text" for stray text; "" when the head ended where it was
	// written (at </head> or <body>). line is its 1-based source line.
	element string
	line    int
	// endTag: element is an end tag (</br>, </body>); inNoscript: it
	// stood inside a <noscript> of the head, which ends the head only for
	// a parser without scripting, as crawlers that do not render parse.
	endTag, inNoscript bool
	// moved are the head-only tags after element and before any </head>
	// or <body>: written for the head, put in the body by the parser.
	moved headTagCounts
	// written are the head-only tags written after </head> or <body>.
	written headTagCounts
}

// Insertion modes of the head scan, after the HTML5 parsing rules.
const (
	modeBeforeHead = iota // initial, before html, before head
	modeInHead
	modeInHeadNoscript
	modeInTemplate
	modeAfterHead
	modeInBody
)

// headScan follows the HTML5 tree builder's "before head", "in head",
// "in head noscript" and "after head" insertion modes over a token stream,
// as a parser without scripting does, and then counts the head-only tags
// in the body.
type headScan struct {
	z    *html.Tokenizer
	mode int
	// templates is the depth of <template> in the head; afterTemplate is
	// the mode its end returns to.
	templates     int
	afterTemplate int
	// foreign is the depth of <svg> and <math> in the body, where a
	// <title> is not the page's.
	foreign int
	// explicit: a </head> or <body> has been seen, so later tags are
	// written in the body rather than moved there.
	explicit bool
	// raw: the next text token is the raw content of the element just
	// opened (a <title>, a <script>), not character data of the head.
	raw bool
	res headEnd
}

// rawTextElements are the elements whose content the tokenizer returns as
// one raw text token.
var rawTextElements = map[string]bool{
	"iframe": true, "noembed": true, "noframes": true, "noscript": true, "plaintext": true,
	"script": true, "style": true, "textarea": true, "title": true, "xmp": true,
}

// markupContent makes the tokenizer read a <noscript>'s content as markup,
// as a parser without scripting does.
func (s *headScan) markupContent() {
	s.z.NextIsNotRawText()
	s.raw = false
}

// scanHead tokenises body once and says where the head ended and which
// head-only tags stand in the body. It reads the whole body, which the lane
// has capped, and keeps nothing of the page but counts and one tag name.
func scanHead(body []byte) headEnd {
	s := &headScan{z: html.NewTokenizer(bytes.NewReader(bytes.TrimPrefix(body, utf8BOM)))}
	line, cr := 1, false
	for {
		tt := s.z.Next()
		if tt == html.ErrorToken {
			return s.res
		}
		start := line
		raw := s.z.Raw()
		var n int
		n, cr = newlines(raw, cr)
		line += n
		if !s.step(tt, raw, start) {
			return s.res
		}
	}
}

// newlines counts the line breaks in b: LF, CR LF and a lone CR, as HTML
// normalises them. cr says the previous chunk ended with a CR; the result
// says whether b does.
func newlines(b []byte, cr bool) (int, bool) {
	n := 0
	for _, c := range b {
		switch {
		case c == '\n' && cr:
		case c == '\n', c == '\r':
			n++
		}
		cr = c == '\r'
	}
	return n, cr
}

// htmlSpace reports whether b is an HTML whitespace byte.
func htmlSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}

// step handles one token that starts on line; false ends the scan.
func (s *headScan) step(tt html.TokenType, raw []byte, line int) bool {
	if tt == html.TextToken {
		if !s.raw {
			s.text(raw, line)
		}
		return true
	}
	s.raw = false
	if tt != html.StartTagToken && tt != html.SelfClosingTagToken && tt != html.EndTagToken {
		return true // comments and doctypes change nothing here
	}
	name, hasAttr := s.z.TagName()
	tag := string(name)
	if tt == html.EndTagToken {
		s.end(tag, line)
		return true
	}
	s.raw = rawTextElements[tag]
	switch s.mode {
	case modeBeforeHead:
		switch tag {
		case "html":
		case "head":
			s.mode = modeInHead
		default:
			s.mode = modeInHead
			return s.inHead(tag, line)
		}
	case modeInHead:
		return s.inHead(tag, line)
	case modeInHeadNoscript:
		switch tag {
		case "basefont", "bgsound", "link", "meta", "noframes", "style", "html", "head", "noscript":
		default:
			s.endEarly(tag, line, false, true)
		}
	case modeInTemplate:
		if tag == "template" && tt == html.StartTagToken {
			s.templates++
		}
	case modeAfterHead:
		switch tag {
		case "base", "basefont", "bgsound", "link", "meta", "noframes", "script", "style", "title", "html", "head":
			// The parser puts these back into the head.
		case "template":
			s.template(modeAfterHead, tt)
		case "frameset":
			return false
		default:
			s.mode = modeInBody
			return s.inBody(tag, tt, hasAttr, line)
		}
	default:
		return s.inBody(tag, tt, hasAttr, line)
	}
	return true
}

// inHead handles a start tag in the head.
func (s *headScan) inHead(tag string, line int) bool {
	switch tag {
	case "base", "basefont", "bgsound", "link", "meta", "title", "style", "script", "noframes", "html", "head":
	case "noscript":
		s.mode = modeInHeadNoscript
		s.markupContent()
	case "template":
		s.template(modeInHead, html.StartTagToken)
	case "body":
		s.mode, s.explicit = modeInBody, true
	case "frameset":
		return false
	default:
		s.endEarly(tag, line, false, false)
	}
	return true
}

// template enters a head <template>, whose content is no part of the page.
func (s *headScan) template(back int, tt html.TokenType) {
	if tt == html.SelfClosingTagToken {
		return
	}
	s.mode, s.afterTemplate, s.templates = modeInTemplate, back, 1
}

// end handles an end tag.
func (s *headScan) end(tag string, line int) {
	switch s.mode {
	case modeBeforeHead:
		if tag == "head" || tag == "body" || tag == "html" || tag == "br" {
			s.mode = modeInHead
			s.end(tag, line)
		}
	case modeInHead:
		switch tag {
		case "head":
			s.mode, s.explicit = modeAfterHead, true
		case "body", "html", "br":
			s.endEarly(tag, line, true, false)
		}
	case modeInHeadNoscript:
		switch tag {
		case "noscript":
			s.mode = modeInHead
		case "br":
			s.endEarly(tag, line, true, true)
		}
	case modeInTemplate:
		if tag == "template" {
			if s.templates--; s.templates == 0 {
				s.mode = s.afterTemplate
			}
		}
	case modeAfterHead:
		if tag == "body" || tag == "html" || tag == "br" {
			s.mode = modeInBody
		}
	case modeInBody:
		switch tag {
		case "head":
			s.explicit = true
		case "svg", "math":
			s.foreign = max(s.foreign-1, 0)
		}
	}
}

// text handles character data.
func (s *headScan) text(raw []byte, line int) {
	switch s.mode {
	case modeBeforeHead, modeInHead, modeInHeadNoscript, modeAfterHead:
	default:
		return
	}
	i := 0
	for i < len(raw) && htmlSpace(raw[i]) {
		i++
	}
	if i == len(raw) {
		return
	}
	if s.mode == modeAfterHead {
		// After </head>, text opens the body where it was written.
		s.mode = modeInBody
		return
	}
	n, _ := newlines(raw[:i], false)
	s.endEarly("text", line+n, false, s.mode == modeInHeadNoscript)
}

// endEarly records the token that ended the head before </head> or <body>.
func (s *headScan) endEarly(tag string, line int, endTag, noscript bool) {
	s.mode = modeInBody
	s.res.element, s.res.line = tag, line
	s.res.endTag, s.res.inNoscript = endTag, noscript
}

// inBody handles a start tag in the body: counts the head-only ones.
func (s *headScan) inBody(tag string, tt html.TokenType, hasAttr bool, line int) bool {
	switch tag {
	case "body":
		s.explicit = true
		return true
	case "noscript":
		s.markupContent()
		return true
	case "svg", "math":
		if tt == html.StartTagToken {
			s.foreign++
		}
		return true
	case "title", "meta", "link":
	default:
		return true
	}
	if s.foreign > 0 {
		return true
	}
	counts := &s.res.written
	if s.res.element != "" && !s.explicit {
		counts = &s.res.moved
	}
	if tag == "title" {
		counts.add(headTitle, line)
		return true
	}
	attrs := map[string]string{}
	for more := hasAttr; more; {
		var k, v []byte
		k, v, more = s.z.TagAttr()
		if _, seen := attrs[string(k)]; !seen {
			attrs[string(k)] = string(v)
		}
	}
	for _, k := range headTagsOf(tag, attrs) {
		counts.add(k, line)
	}
	return true
}

// headTagsOf says which head-only tags a <meta> or <link> is, by the rules
// the extractor reads them with.
func headTagsOf(tag string, attrs map[string]string) []headTag {
	var out []headTag
	if tag == "meta" {
		if _, ok := attrs["content"]; !ok {
			return nil
		}
		switch name := strings.ToLower(strings.TrimSpace(attrs["name"])); {
		case name == "description":
			out = append(out, headDescription)
		case name == "robots" || isBotMetaName(name):
			out = append(out, headRobots)
		}
		return out
	}
	_, href := attrs["href"]
	_, lang := attrs["hreflang"]
	for _, rel := range strings.Fields(strings.ToLower(attrs["rel"])) {
		switch {
		case rel == "canonical" && href:
			out = append(out, headCanonical)
		case rel == "alternate" && lang:
			out = append(out, headHreflang)
		}
	}
	return out
}
