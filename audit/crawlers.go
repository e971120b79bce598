package audit

import (
	"net/url"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// crawlerRows computes report.crawlers from the robots.txt this audit
// already read (no new fetch, no other user agent) and the lanes' pages;
// their sentence goes into the verdict (compare.Conclude). Nil when no lane
// produced a document.
func crawlerRows(res policy.RobotsResult, target *url.URL, plain, rendered *compare.Observed) []compare.CrawlerRow {
	if plain == nil && rendered == nil {
		return nil
	}
	verdicts := map[string]compare.RobotsVerdict{}
	for _, c := range compare.Crawlers() {
		d, err := res.DecideURL(c.Token, target)
		if err != nil {
			continue // robots.txt unreadable: nothing is known
		}
		verdicts[c.Token] = compare.RobotsVerdict{Known: true, Allowed: d.Allowed, Group: d.Group, Rule: d.Rule, Line: d.Line}
	}
	return compare.SeenByCrawlers(verdicts, plain, rendered)
}
