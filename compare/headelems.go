package compare

import (
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// meta reads one <meta> element.
func (x *extractor) meta(s *goquery.Selection) {
	content, ok := s.Attr("content")
	if !ok {
		return
	}
	name := strings.ToLower(strings.TrimSpace(s.AttrOr("name", "")))
	prop := strings.ToLower(strings.TrimSpace(s.AttrOr("property", "")))
	switch {
	case name == "description" && inBody(s.Get(0)):
		// Search engines and Lighthouse read the description in <head> only.
		x.page.MetaDescriptionInBody++
	case name == "description":
		if x.page.described {
			x.page.OtherMetaDescriptions = x.other(x.page.OtherMetaDescriptions, "meta_description", content)
		}
		x.page.described = true
		if x.page.MetaDescription == "" {
			x.noteWrite(fieldDescription, s.Get(0))
			x.page.MetaDescription = blankToEmpty(x.t.cleanText("meta_description", content, maxText))
		}
	case name == "robots":
		x.noteWrite(fieldRobots, s.Get(0))
		x.robotsMeta = append(x.robotsMeta, content)
	case name == "" && !x.page.hasRefresh && strings.EqualFold(strings.TrimSpace(s.AttrOr("http-equiv", "")), "refresh"):
		x.page.refreshDelay, x.page.hasRefresh = refreshDelay(content)
	case isBotMetaName(name):
		x.noteWrite(fieldRobots, s.Get(0))
		x.botMeta(name, content)
	}
	if (name == "robots" || isBotMetaName(name)) && inBody(s.Get(0)) {
		x.page.robotsTitleInBody++
	}
	if prop == "" && strings.HasPrefix(name, "og:") {
		prop = name
	}
	og := &x.page.OpenGraph
	if strings.HasPrefix(prop, "og:") {
		x.noteWrite(fieldOpenGraph, s.Get(0))
	}
	switch prop {
	case "og:title":
		setOnce(&og.Title, x.t.cleanText("open_graph", content, maxText))
	case "og:description":
		setOnce(&og.Description, x.t.cleanText("open_graph", content, maxText))
	case "og:type":
		setOnce(&og.Type, x.t.cleanText("open_graph", content, 64))
	case "og:image":
		setOnce(&og.Image, x.resolve(x.base, content, "open_graph", false))
	case "og:url":
		setOnce(&og.URL, x.resolve(x.base, content, "open_graph", false))
	}
}

// other adds the text of a repeated head element to list, at most maxOthers.
func (x *extractor) other(list []string, field, text string) []string {
	if len(list) >= maxOthers {
		x.t.mark(field)
		return list
	}
	return append(list, x.t.cleanText(field, text, maxText))
}

// setOnce sets *dst to v unless it already holds a value.
func setOnce(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// botMeta records a robots meta addressed to one crawler.
func (x *extractor) botMeta(name, content string) {
	name, _ = clip(name, 64)
	if x.page.BotRobots == nil {
		x.page.BotRobots = map[string]string{}
	}
	content = x.t.cleanText("bot_robots", content, maxText)
	prev, seen := x.page.BotRobots[name]
	switch {
	case seen:
		joined, cut := clip(prev+", "+content, maxText)
		if cut {
			x.t.mark("bot_robots")
		}
		x.page.BotRobots[name] = joined
	case len(x.page.BotRobots) >= maxBotRobots:
		x.t.mark("bot_robots")
	default:
		x.page.BotRobots[name] = content
	}
	if name == x.token {
		x.tokenMeta = append(x.tokenMeta, content)
	}
}

// linkElement reads one <link>: canonical and hreflang alternates. Those in
// <body> are counted, not used, as search engines ignore them there.
func (x *extractor) linkElement(s *goquery.Selection) {
	href, hasHref := s.Attr("href")
	body := false
	for i, rel := range strings.Fields(strings.ToLower(s.AttrOr("rel", ""))) {
		if i == 0 {
			body = inBody(s.Get(0))
		}
		switch rel {
		case "canonical":
			if !hasHref {
				continue
			}
			if body {
				x.page.CanonicalInBody++
				continue
			}
			resolved, written := x.canonicalURL(x.base, href, "canonical")
			if resolved != "" {
				x.noteWrite(fieldCanonical, s.Get(0))
				x.canonicals = append(x.canonicals, resolved)
			}
			x.canonicalHrefs = append(x.canonicalHrefs, written)
		case "alternate":
			lang, ok := s.Attr("hreflang")
			if !ok {
				continue
			}
			if body {
				x.page.HreflangInBody++
				continue
			}
			x.noteWrite(fieldHreflang, s.Get(0))
			x.alternate(lang, href, hasHref, x.base, false)
		}
	}
}

// alternate records one hreflang alternate. The language is kept as
// written (spaces included, so they can be reported) and a relative href
// keeps its written form beside the resolved one.
func (x *extractor) alternate(lang, href string, hasHref bool, base *url.URL, header bool) {
	if len(x.page.Hreflang) >= maxHreflang {
		x.t.mark("hreflang")
		return
	}
	lang, cut := clip(lang, 64)
	if cut {
		x.t.mark("hreflang")
	}
	a := Alternate{Lang: lang, Header: header}
	if hasHref {
		href = strings.TrimSpace(href)
		a.Href = x.resolve(base, href, "hreflang", false)
		if urlKind(href) != urlAbsolute {
			a.HrefWritten, _ = clip(href, maxURL)
		}
	}
	a.NoHref = !hasHref
	x.page.Hreflang = append(x.page.Hreflang, a)
}

// script reads one JSON-LD block.
func (x *extractor) script(s *goquery.Selection) {
	typ, _, _ := strings.Cut(s.AttrOr("type", ""), ";")
	if !strings.EqualFold(strings.TrimSpace(typ), "application/ld+json") {
		return
	}
	if len(x.page.JSONLD) >= maxJSONLD {
		x.t.mark("json_ld")
		return
	}
	block := parseJSONLD(s.Text(), x.t)
	x.page.JSONLD = append(x.page.JSONLD, block)
	if x.writes != nil {
		x.writes.jsonld = append(x.writes.jsonld, x.writeAbove(s.Get(0)))
	}
	if x.jsonLDTypes == nil {
		x.jsonLDTypes = map[string]bool{}
	}
	for _, typ := range block.Types {
		x.jsonLDTypes[typ] = true
	}
}
