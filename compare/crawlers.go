package compare

import (
	"fmt"
	"strings"
)

// Crawler is a well-known crawler: its robots.txt product token, whether it
// runs JavaScript (so which lane's view it gets) and where that claim comes
// from.
type Crawler struct {
	Token   string `json:"token"`
	Renders bool   `json:"renders"`
	Source  string `json:"source"`
}

// crawlers is the table of well-known crawlers, renderers first.
var crawlers = []Crawler{
	{"Googlebot", true, "Google Search Central, JavaScript SEO basics: Googlebot queues pages for rendering in an evergreen Chromium."},
	{"Bingbot", true, "Bing Webmaster Blog (2019): Bingbot renders pages with the Chromium-based Edge engine."},
	{"Applebot", true, "Apple, About Applebot: Applebot may render a page's content in a browser, JavaScript included."},
	{"GPTBot", false, "Vercel and MERJ crawler study (2024): GPTBot fetches JavaScript files but does not execute them."},
	{"OAI-SearchBot", false, "Vercel and MERJ crawler study (2024): OpenAI's crawlers do not execute JavaScript."},
	{"ChatGPT-User", false, "Vercel and MERJ crawler study (2024): OpenAI's fetchers do not execute JavaScript."},
	{"ClaudeBot", false, "Vercel and MERJ crawler study (2024): ClaudeBot fetches JavaScript files but does not execute them."},
	{"Claude-SearchBot", false, "Anthropic's crawler documentation describes no rendering; assumed to read the HTML as ClaudeBot does."},
	{"PerplexityBot", false, "Vercel and MERJ crawler study (2024): no JavaScript execution observed for Perplexity's crawler."},
	{"CCBot", false, "Common Crawl archives the HTTP responses it fetches (WARC files) without rendering them."},
	{"Google-Extended", false, "Google's crawler documentation: a robots.txt token with no fetcher of its own; whether Gemini uses the rendered page is not documented, so the server HTML is assumed."},
	{"Bytespider", false, "No rendering documented or observed for ByteDance's crawler; assumed to read the server HTML."},
	{"Amazonbot", false, "Amazon's Amazonbot documentation describes no rendering; assumed to read the server HTML."},
	{"archive.org_bot", false, "The Internet Archive's crawler (Heritrix) stores responses as fetched; scripts run only on replay."},
}

// Crawlers returns the table of well-known crawlers (a fresh copy).
func Crawlers() []Crawler { return append([]Crawler(nil), crawlers...) }

// RobotsVerdict is what robots.txt says to one crawler token about the
// audited URL, computed by the caller from the robots.txt the audit read.
type RobotsVerdict struct {
	// Known is false when no robots.txt answer exists (not read).
	Known   bool   `json:"known"`
	Allowed bool   `json:"allowed"`
	Group   string `json:"group,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Line    int    `json:"line,omitempty"`
}

// CrawlerRow is what one crawler is told and sees of the page.
type CrawlerRow struct {
	Token   string `json:"token"`
	Renders bool   `json:"renders"`
	// View is the lane whose document the crawler gets: render for those
	// that run JavaScript, plain for the others.
	View   Lane   `json:"view"`
	Source string `json:"source"`
	// Robots is robots.txt's answer for this crawler's token.
	Robots RobotsVerdict `json:"robots"`
	// Directives are the robots metas and X-Robots-Tag values of its view
	// that apply to it, generic and addressed to it, as "meta robots: …",
	// "meta googlebot: …", "X-Robots-Tag: …", "X-Robots-Tag gptbot: …".
	Directives []string `json:"directives"`
	Noindex    bool     `json:"noindex"`
	Nofollow   bool     `json:"nofollow"`
	// MayIndex: robots.txt lets it fetch the page, its view exists and no
	// directive that applies to it says noindex.
	MayIndex bool `json:"may_index"`
	// Missing: the lane of its view produced no document.
	Missing bool `json:"missing,omitempty"`
	// Title, Description and Canonical are what it sees ("" when it may
	// not fetch the page); ContentShare is the share (0..1) of the rendered
	// page's words it gets.
	Title        string  `json:"title"`
	Description  string  `json:"description"`
	Canonical    string  `json:"canonical"`
	ContentShare float64 `json:"content_share"`
}

// SeenByCrawlers computes one row per well-known crawler from the robots
// verdicts (by token; a missing one counts as not known) and both lanes'
// pages. Nothing is fetched: each crawler's view is the lane matching its
// rendering. Either lane may be nil.
func SeenByCrawlers(robots map[string]RobotsVerdict, plain, render *Observed) []CrawlerRow {
	p, r := observe(plain), observe(render)
	d := &differ{p: p, r: r}
	d.shares()
	plainShare := d.textShare
	if r.page == nil && p.page != nil {
		plainShare = 1
	}
	rows := make([]CrawlerRow, 0, len(crawlers))
	for _, c := range crawlers {
		row := CrawlerRow{Token: c.Token, Renders: c.Renders, View: LanePlain, Source: c.Source,
			Robots: robots[c.Token], Directives: []string{}}
		view, share := p, plainShare
		if c.Renders {
			row.View, view, share = LaneRender, r, 1
			if p.page == nil {
				share = 1
			}
		}
		fetch := !row.Robots.Known || row.Robots.Allowed
		switch {
		case view.page == nil:
			row.Missing = true
		case fetch:
			row.fill(view, share)
		}
		row.MayIndex = fetch && !row.Missing && !row.Noindex
		rows = append(rows, row)
	}
	return rows
}

// fill sets what the crawler sees from its view.
func (row *CrawlerRow) fill(view side, share float64) {
	pg := view.htmlPage()
	if pg == nil {
		return
	}
	row.Title, row.Description, row.Canonical = pg.Title, pg.MetaDescription, canonicalTarget(pg)
	row.ContentShare = share
	token := strings.ToLower(row.Token)
	now := view.now()
	var d directives
	if pg.MetaRobots != "" {
		row.Directives = append(row.Directives, "meta robots: "+pg.MetaRobots)
		d = d.or(parseDirectives(pg.MetaRobots, now))
	}
	if c, ok := pg.BotRobots[token]; ok {
		row.Directives = append(row.Directives, "meta "+token+": "+c)
		d = d.or(parseDirectives(c, now))
	}
	for _, v := range pg.XRobotsTag {
		for _, rule := range parseXRobotsTag(v, now) {
			switch rule.agent {
			case "":
				row.Directives = append(row.Directives, "X-Robots-Tag: "+rule.text)
			case token:
				row.Directives = append(row.Directives, "X-Robots-Tag "+token+": "+rule.text)
			default:
				continue
			}
			d = d.or(rule.d)
		}
	}
	row.Noindex, row.Nofollow = d.noindex, d.nofollow
}

// CrawlerSummary says in one sentence how the crawlers' views differ:
// who robots.txt keeps out, who is told noindex, and who sees which title
// ("GPTBot, ClaudeBot and 9 more see no title; Googlebot, Bingbot and
// Applebot see the rendered one."). It is "" when they all see the same.
func CrawlerSummary(rows []CrawlerRow) string {
	var blocked, noindex []string
	titles := map[Lane][]string{}
	title := map[Lane]string{}
	for _, row := range rows {
		switch {
		case row.Robots.Known && !row.Robots.Allowed:
			blocked = append(blocked, row.Token)
			continue
		case row.Missing:
			continue
		case row.Noindex:
			noindex = append(noindex, row.Token)
		}
		titles[row.View] = append(titles[row.View], row.Token)
		title[row.View] = row.Title
	}
	var parts []string
	if len(blocked) > 0 {
		parts = append(parts, "robots.txt keeps "+names(blocked)+" out")
	}
	if len(noindex) > 0 {
		parts = append(parts, names(noindex)+" "+isAre(len(noindex))+" told noindex")
	}
	pt, rt := title[LanePlain], title[LaneRender]
	if len(titles[LanePlain]) > 0 && len(titles[LaneRender]) > 0 && pt != rt {
		plainSees := "see the title " + q(pt)
		if pt == "" {
			plainSees = "see no title"
		}
		renderSees := "see the rendered one"
		if rt == "" {
			renderSees = "see none after scripts run"
		}
		parts = append(parts, fmt.Sprintf("%s %s; %s %s", names(titles[LanePlain]), plainSees, names(titles[LaneRender]), renderSees))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}

// names lists tokens as "A and B" or "A, B and 5 more".
func names(tokens []string) string {
	if len(tokens) > 3 {
		return fmt.Sprintf("%s, %s and %d more", tokens[0], tokens[1], len(tokens)-2)
	}
	return joinAnd(tokens)
}

// isAre agrees the verb with a count.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
