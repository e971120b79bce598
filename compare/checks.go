package compare

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/publicsuffix"
)

// Lengths outside which a title or description is reported (in characters).
const (
	maxGoodTitle       = 70
	minGoodDescription = 25
	maxGoodDescription = 160
)

// pageCheck is one validity check of a lane's page: test returns "" when
// the page passes and otherwise the detail its message quotes. The message
// format takes the detail, then where (the lane phrase); links.uncrawlable
// has none, as sayUncrawlable writes its message from both sides.
type pageCheck struct {
	code string
	test func(s side) string
	msg  string
}

// pageChecks run on each HTML lane; a check failing in one lane only is a
// finding for that lane, one failing in both a single finding.
var pageChecks = []pageCheck{
	{CodeCanonicalInvalid, canonicalInvalid,
		"The canonical %s %s is not a URL, so search engines ignore it. Write an absolute http(s) URL."},
	{CodeCanonicalRelative, canonicalRelative,
		"The canonical %s %s is a relative URL. Search engines resolve it, but a copy of the page on another host or path then names itself; write the absolute URL."},
	{CodeCanonicalInBody, canonicalInBody,
		"Search engines ignore canonical links in <body>, and %[2]s %[1]s there. Put the canonical link in <head>."},
	{CodeMetaDescriptionInBody, descriptionInBody,
		"Search engines ignore meta descriptions in <body>, so it does not count as the page's description, and %[2]s %[1]s there. Put it in <head>."},
	{CodeCanonicalRoot, canonicalRoot,
		"The canonical URL %s %s is the site's root, but this page is deeper. Search engines may then drop this page in favour of the home page; name the page's own URL."},
	{CodeCanonicalAlternate, canonicalAlternate,
		"The canonical URL %s %s is another language version of this page (one of its hreflang alternates). Each language version should name itself as canonical."},
	{CodeCanonicalOtherDomain, canonicalOtherDomain,
		"The canonical URL %s %s is on another domain. Fine for syndicated content; otherwise search engines index the other domain instead of this one."},
	{CodeHreflangInvalid, hreflangInvalid,
		"The hreflang value %s %s is not a language code search engines accept (BCP 47 language, optionally with script and region, or x-default), so that alternate is ignored."},
	{CodeHreflangSpaces, hreflangSpaces,
		"The hreflang value %s %s has leading or trailing spaces. Not every consumer trims them; write the code alone."},
	{CodeHreflangRelative, hreflangRelative,
		"The hreflang href %s %s is not an absolute URL. Search engines expect fully qualified alternate URLs; write them with scheme and host."},
	{CodeHreflangMissingHref, hreflangMissingHref,
		"An hreflang alternate for %s %s has no href, so it points nowhere. Add the URL of that language version."},
	{CodeHreflangInBody, hreflangInBody,
		"Search engines ignore hreflang alternates in <body>, and %[2]s %[1]s there. Put them in <head> or a Link header."},
	{CodeHreflangNoSelf, hreflangNoSelf,
		"The hreflang alternates (%s) %s do not include this page itself. Each language version should list itself too."},
	{CodeHreflangNoXDefault, hreflangNoXDefault,
		"The hreflang alternates (%s) %s have no x-default, the page for visitors whose language matches none of them."},
	{CodeTitleMultiple, titleMultiple,
		"The page has %s %s. Browsers show the first, and search engines use it too; remove the others, so that the title you mean is the one used."},
	{CodeMetaDescriptionMultiple, descriptionMultiple,
		"The head has %s %s. Search engines read the first; remove the others, so that the description you mean is the one used."},
	{CodeTitleLong, titleLong,
		"The title is %s long %s; search results cut titles at about 60 characters. Put what matters first."},
	{CodeMetaDescriptionLength, descriptionLength,
		"The meta description is %s long %s; search engines show about 160 characters and rewrite very short ones."},
	{CodeRobotsUnavailableAfter, unavailableAfter,
		"The “unavailable_after” date %s %s has passed, so search engines treat the page as noindex. Remove the directive or move the date."},
	{CodeRobotsBotNoindex, botNoindex,
		"Robots directives addressed to %s say noindex %s. Those crawlers drop the page while others may index it; the crawlers table shows who sees what."},
	{CodeLinksNonDescriptive, nonDescriptive,
		"%s %s say nothing about where they lead. Search engines and screen readers use link text to understand the target; describe it."},
	{CodeLinksUncrawlable, uncrawlableLinks, ""},
}

// checkCodes are the codes of the validity checks. Failing in both lanes
// they say something about the page, not about what the lanes differ in,
// so the verdict does not count them as differences.
var checkCodes = func() map[string]bool {
	m := map[string]bool{CodeMetaDescriptionMissing: true, CodeHeadEndedEarly: true}
	for _, c := range pageChecks {
		m[c.code] = true
	}
	return m
}()

// checkFindings runs pageChecks and the description check on the HTML lanes.
func (d *differ) checkFindings(l *findingList) {
	p, r := side{snap: d.p.snap, page: d.p.htmlPage()}, side{snap: d.r.snap, page: d.r.htmlPage()}
	for _, c := range pageChecks {
		var pd, rd string
		if p.page != nil {
			pd = c.test(p)
		}
		if r.page != nil {
			rd = c.test(r)
		}
		lane, ok := laneOf(pd != "", rd != "")
		if !ok {
			continue
		}
		detail := rd
		if lane == LanePlain || rd == "" {
			detail = pd
		}
		if c.code == CodeLinksUncrawlable {
			l.add(c.code, lane, "%s", sayUncrawlable(p, r, lane))
		} else {
			l.add(c.code, lane, c.msg, detail, inLane(lane))
		}
		d.explainInBody(l, c.code, lane)
	}
	noDesc := func(s side) bool { return s.page != nil && s.page.MetaDescription == "" }
	if lane, ok := laneOf(noDesc(p), noDesc(r)); ok && (lane == "" || p.page == nil || r.page == nil) {
		// With both lanes, a description in one only is
		// meta_description.render_only or .plain_only instead.
		l.add(CodeMetaDescriptionMissing, lane, "The page has no meta description %s (or an empty one, or one of only spaces). Search engines and AI answers then write their own summary; add one or two sentences.", inLane(lane))
	}
}

// now is the time a side's response was sent (Snapshot.Clock: its Date
// header, else the time of the fetch), the clock unavailable_after dates
// are judged by; zero when unknown.
func (s side) now() time.Time {
	return s.snap.Clock()
}

// pageURL is the normalised final URL of a side, "" without a snapshot.
func (s side) pageURL() string {
	if s.snap == nil {
		return ""
	}
	u := s.snap.FinalURL
	if u == "" {
		u = s.snap.RequestedURL
	}
	return normURL(u)
}

// canonicalTarget is the canonical a side declares, the element's first,
// else the Link header's.
func canonicalTarget(p *Page) string {
	if p.Canonical != "" {
		return p.Canonical
	}
	return p.CanonicalHeader
}

func canonicalInvalid(s side) string {
	var bad []string
	if h := s.page.CanonicalHref; h != "" && urlKind(h) == urlInvalid {
		bad = append(bad, "href "+q(h))
	}
	if h := s.page.CanonicalHeaderHref; h != "" && urlKind(h) == urlInvalid {
		bad = append(bad, "in the Link header "+q(h))
	}
	return strings.Join(bad, " and ")
}

func canonicalRelative(s side) string {
	var rel []string
	if h := s.page.CanonicalHref; h != "" && urlKind(h) == urlRelative {
		rel = append(rel, "href "+q(h))
	}
	if h := s.page.CanonicalHeaderHref; h != "" && urlKind(h) == urlRelative {
		rel = append(rel, "in the Link header "+q(h))
	}
	return strings.Join(rel, " and ")
}

// rootPaths are the paths that name a site's root page.
var rootPaths = map[string]bool{"": true, "/": true, "/index.html": true, "/index.htm": true, "/index.php": true, "/default.aspx": true}

func canonicalRoot(s side) string {
	c, page := canonicalTarget(s.page), s.pageURL()
	cu, err1 := url.Parse(c)
	pu, err2 := url.Parse(page)
	if c == "" || page == "" || err1 != nil || err2 != nil {
		return ""
	}
	root := (cu.Path == "" || cu.Path == "/") && cu.RawQuery == ""
	deeper := !rootPaths[strings.ToLower(pu.Path)]
	if root && deeper && strings.EqualFold(cu.Host, pu.Host) {
		return q(c)
	}
	return ""
}

func canonicalAlternate(s side) string {
	c, page := normURL(canonicalTarget(s.page)), s.pageURL()
	if c == "" || page == "" || c == page {
		return ""
	}
	var hasPage, hasCanonical bool
	for _, a := range s.page.Hreflang {
		h := normURL(a.Href)
		hasPage = hasPage || h == page
		hasCanonical = hasCanonical || h == c
	}
	if hasPage && hasCanonical {
		return q(c)
	}
	return ""
}

func canonicalOtherDomain(s side) string {
	c, page := canonicalTarget(s.page), s.pageURL()
	cu, err1 := url.Parse(c)
	pu, err2 := url.Parse(page)
	if c == "" || page == "" || err1 != nil || err2 != nil || cu.Hostname() == "" {
		return ""
	}
	if registrable(cu.Hostname()) != registrable(pu.Hostname()) {
		return q(c)
	}
	return ""
}

// registrable is a host's registrable domain (eTLD+1), or the host itself
// when it has none (an IP address, a bare public suffix).
func registrable(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return d
	}
	return host
}

// firstLangs quotes up to three hreflang values that fail test.
func firstLangs(p *Page, test func(Alternate) bool) string {
	var out []string
	n := 0
	for _, a := range p.Hreflang {
		if test(a) {
			n++
			if len(out) < 3 {
				out = append(out, q(a.Lang))
			}
		}
	}
	if n > len(out) {
		out = append(out, fmt.Sprintf("and %d more", n-len(out)))
	}
	return strings.Join(out, ", ")
}

func hreflangInvalid(s side) string {
	return firstLangs(s.page, func(a Alternate) bool {
		return a.Lang == strings.TrimSpace(a.Lang) && !validHreflang(a.Lang)
	})
}

func hreflangSpaces(s side) string {
	return firstLangs(s.page, func(a Alternate) bool { return a.Lang != strings.TrimSpace(a.Lang) })
}

func hreflangRelative(s side) string {
	var out []string
	n := 0
	for _, a := range s.page.Hreflang {
		if a.HrefWritten != "" && !a.NoHref {
			n++
			if len(out) < 3 {
				out = append(out, q(a.HrefWritten))
			}
		}
	}
	if n > len(out) {
		out = append(out, fmt.Sprintf("and %d more", n-len(out)))
	}
	return strings.Join(out, ", ")
}

func hreflangMissingHref(s side) string {
	return firstLangs(s.page, func(a Alternate) bool { return a.NoHref })
}

func hreflangNoSelf(s side) string {
	alts := s.page.Hreflang
	page := s.pageURL()
	if len(alts) == 0 || page == "" {
		return ""
	}
	canonical := normURL(canonicalTarget(s.page))
	for _, a := range alts {
		if h := normURL(a.Href); h != "" && (h == page || h == canonical) {
			return ""
		}
	}
	return plural(len(alts), "alternate", "alternates")
}

func hreflangNoXDefault(s side) string {
	if len(s.page.Hreflang) == 0 || slices.ContainsFunc(s.page.Hreflang, func(a Alternate) bool {
		return strings.EqualFold(strings.TrimSpace(a.Lang), "x-default")
	}) {
		return ""
	}
	return plural(len(s.page.Hreflang), "alternate", "alternates")
}

func titleLong(s side) string {
	if n := utf8.RuneCountInString(s.page.Title); n > maxGoodTitle {
		return fmt.Sprintf("%d characters", n)
	}
	return ""
}

func descriptionLength(s side) string {
	n := utf8.RuneCountInString(s.page.MetaDescription)
	if n > 0 && (n < minGoodDescription || n > maxGoodDescription) {
		return fmt.Sprintf("%d characters", n)
	}
	return ""
}

func unavailableAfter(s side) string {
	if s.page.Expired {
		return q(s.page.UnavailableAfter)
	}
	return ""
}

// botNoindex names the crawlers (other than the auditing bot, whose rules
// count in Noindex) that a bot-specific robots meta or X-Robots-Tag tells
// noindex.
func botNoindex(s side) string {
	names := map[string]bool{}
	for name, content := range s.page.BotRobots {
		if name != strings.ToLower(DefaultBotToken) && parseDirectives(content, s.now()).noindex {
			names[name] = true
		}
	}
	for _, v := range s.page.XRobotsTag {
		for _, r := range parseXRobotsTag(v, s.now()) {
			if r.agent != "" && r.agent != strings.ToLower(DefaultBotToken) && r.d.noindex {
				names[r.agent] = true
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	return strings.Join(sorted, ", ")
}

func nonDescriptive(s side) string {
	var ex string
	n := 0
	for _, link := range s.page.Links {
		if link.NonDescriptive {
			if n == 0 {
				ex = link.Text
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s, for example %s,", plural(n, "link text", "link texts"), q(ex))
}
