package compare

import (
	"fmt"
	"regexp"
	"strings"
)

// headEnd scans the server HTML once per Diff, and only when the plain
// lane's page has a head-only tag in <body>; nil otherwise.
func (d *differ) headEnd() *headEnd {
	if d.headScanned {
		return d.head
	}
	d.headScanned = true
	p := d.p.htmlPage()
	if p == nil || d.p.snap == nil || headTagsInBody(p) == 0 {
		return nil
	}
	h := scanHead(d.p.snap.Body)
	d.head = &h
	return d.head
}

// headTagsInBody counts the head-only tags the extractor found in <body>.
func headTagsInBody(p *Page) int {
	return p.CanonicalInBody + p.HreflangInBody + p.MetaDescriptionInBody + p.robotsTitleInBody
}

// headEndFindings reports a head the parser ended early, when that moved
// head-only tags into the body. The cause is read from the server HTML; the
// finding holds for both lanes when the rendered page has such tags in its
// body too.
func (d *differ) headEndFindings(l *findingList) {
	h := d.headEnd()
	if h == nil || h.element == "" || h.moved.total() == 0 {
		return
	}
	lane := LanePlain
	if r := d.r.htmlPage(); r != nil && headTagsInBody(r) > 0 {
		lane = ""
	}
	n := h.moved.total()
	verb, them := "are", "them"
	if n == 1 {
		verb, them = "is", "it"
	}
	l.add(CodeHeadEndedEarly, lane, "%s %s; %s after it %s in the body, where search engines ignore %s. %s",
		h.subject(), h.ends(), joinAnd(h.moved.phrases()), verb, them, h.fix())
	l.cause(h.cause())
}

// inBodyTag is the head-only tag an in_body check code is about.
var inBodyTag = map[string]headTag{
	CodeCanonicalInBody:       headCanonical,
	CodeHreflangInBody:        headHreflang,
	CodeMetaDescriptionInBody: headDescription,
}

// explainInBody gives the in_body finding added last its parser cause: the
// token that ended the head early when such a tag was moved, else the line
// where the first one is written in the body. A finding of the rendered
// page alone gets none: the server HTML does not explain it.
func (d *differ) explainInBody(l *findingList, code string, lane Lane) {
	k, ok := inBodyTag[code]
	if !ok || lane == LaneRender || len(*l) == 0 {
		return
	}
	h := d.headEnd()
	if h == nil {
		return
	}
	var c *Cause
	var why string
	switch {
	case h.moved.n[k] > 0:
		c = h.cause()
		why = "The cause: " + LowerFirst(h.subject()) + " " + h.ends() + "."
	case h.written.n[k] > 0:
		tag := "meta"
		if k != headDescription {
			tag = "link"
		}
		c = &Cause{Kind: CauseParser, Element: tag, SourceLine: h.written.first[k]}
		who := "It is"
		if h.written.n[k] > 1 {
			who = "The first is"
		}
		why = fmt.Sprintf("%s written inside <body>, on line %d of the server HTML.", who, c.SourceLine)
	default:
		return
	}
	f := &(*l)[len(*l)-1]
	f.Message += " " + why
	l.cause(c)
}

// cause is the parser cause of a head that ended early.
func (h *headEnd) cause() *Cause {
	el, _ := clip(strings.ToValidUTF8(h.element, "\uFFFD"), 64)
	return &Cause{Kind: CauseParser, Element: el, SourceLine: h.line}
}

// simpleTag matches tag names that may stand in a message unquoted.
var simpleTag = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// subject names the token that ended the head: "An <iframe> on line 48 of
// the server HTML". A tag name the page made up otherwise is quoted.
func (h *headEnd) subject() string {
	where := fmt.Sprintf("on line %d of the server HTML", h.line)
	if h.inNoscript {
		where = "inside <noscript> " + where
	}
	switch {
	case h.element == "text":
		return "Stray text " + where
	case !simpleTag.MatchString(h.element):
		return "An element named " + q(h.element) + " " + where
	case h.endTag:
		return "An end tag </" + h.element + "> " + where
	case strings.ContainsRune("aeiou", rune(h.element[0])):
		return "An <" + h.element + "> " + where
	}
	return "A <" + h.element + "> " + where
}

// ends says what the token does.
func (h *headEnd) ends() string {
	if h.inNoscript {
		return "ends the head early for crawlers that do not run scripts"
	}
	return "ends the head early"
}

// fix says what to do about the token.
func (h *headEnd) fix() string {
	switch {
	case h.element == "text":
		return "Remove the text or move it into <body>."
	case h.inNoscript:
		return "Move the <noscript> into <body>."
	case h.endTag || !simpleTag.MatchString(h.element):
		return "Remove it or move it into <body>."
	}
	return "Move the <" + h.element + "> into <body>, after the head's tags."
}

// phrases lists the counted tags for a message: "the canonical",
// "2 hreflang links".
func (c *headTagCounts) phrases() []string {
	names := [headTagKinds][2]string{
		headTitle:       {"the title", "titles"},
		headCanonical:   {"the canonical", "canonical links"},
		headHreflang:    {"the hreflang link", "hreflang links"},
		headDescription: {"the meta description", "meta descriptions"},
		headRobots:      {"the robots meta", "robots metas"},
	}
	var out []string
	for k, n := range c.n {
		switch {
		case n == 1:
			out = append(out, names[k][0])
		case n > 1:
			out = append(out, fmt.Sprintf("%d %s", n, names[k][1]))
		}
	}
	return out
}
