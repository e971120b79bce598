package compare

import (
	"fmt"
	"strings"
)

// The predicates of the links.uncrawlable message: for anchors of any
// reason, and for anchors that are all hash routes.
const (
	uncrawlableTail = " cannot be followed by crawlers (javascript:, file: or ftp: hrefs, anchors without href driven by an event listener)."
	hashRouteWhy    = "the fragment after # never reaches the server, so to a crawler every route is this same page"
	hashRouteFix    = "Give each route a real URL (history API routing) and link to it with <a href>."
)

// uncrawlableSummary is what one lane's uncrawlable anchors say in the
// message.
type uncrawlableSummary struct {
	n      int  // UncrawlableCount
	routes int  // hash routes among the listed anchors
	listed bool // every anchor is listed, so routes counts them all
	// example is the anchor the message quotes: the first that is no hash
	// route, or the first hash route when all are.
	example UncrawlableLink
	route   string // the first hash route's href
}

// summarizeUncrawlable reads a lane's uncrawlable anchors; ok is false
// when it has none.
func summarizeUncrawlable(p *Page) (sum uncrawlableSummary, ok bool) {
	if p == nil || p.UncrawlableCount == 0 || len(p.UncrawlableLinks) == 0 {
		return sum, false
	}
	sum = uncrawlableSummary{n: p.UncrawlableCount, listed: len(p.UncrawlableLinks) == p.UncrawlableCount}
	other := -1
	for i, link := range p.UncrawlableLinks {
		if link.Reason != reasonHashRoute {
			if other < 0 {
				other = i
			}
			continue
		}
		if sum.routes == 0 {
			sum.route = link.Href
		}
		sum.routes++
	}
	sum.example = p.UncrawlableLinks[0]
	if other >= 0 {
		sum.example = p.UncrawlableLinks[other]
	}
	return sum, true
}

// allRoutes reports whether every uncrawlable anchor is a hash route.
func (s uncrawlableSummary) allRoutes() bool {
	return s.listed && s.routes == s.n
}

// uncrawlableLinks is the links.uncrawlable test: the lane's uncrawlable
// anchors counted, with an example, or "" for none.
func uncrawlableLinks(s side) string {
	sum, ok := summarizeUncrawlable(s.page)
	if !ok {
		return ""
	}
	anchors := plural(sum.n, "anchor", "anchors")
	if sum.allRoutes() {
		return fmt.Sprintf("%s (for example %s)", anchors, q(sum.route))
	}
	what := q(sum.example.Href)
	if sum.example.Href == "" {
		what = "<a> " + q(sum.example.Text)
	}
	return fmt.Sprintf("%s (for example %s, %s)", anchors, what, uncrawlableWords(sum.example.Reason))
}

// sayUncrawlable writes the links.uncrawlable message for the lanes it
// fails in. Hash routes get their own words, as the fix differs: a route
// needs a real URL, not only a real href.
func sayUncrawlable(p, r side, lane Lane) string {
	pd, rd := uncrawlableLinks(p), uncrawlableLinks(r)
	ps, _ := summarizeUncrawlable(p.page)
	rs, _ := summarizeUncrawlable(r.page)
	sums := []uncrawlableSummary{ps, rs}
	subject := rd + " " + inLane(lane)
	switch {
	case lane == LanePlain:
		subject, sums = pd+" "+inLane(lane), sums[:1]
	case lane == LaneRender:
		sums = sums[1:]
	case pd != rd:
		subject = pd + " in the server HTML and " + rd + " in the rendered page"
	default:
		sums = sums[1:] // the same anchors in both lanes
	}
	all, many := true, len(sums) > 1 || sums[0].n > 1
	var routes, route string
	for _, s := range sums {
		all = all && s.allRoutes()
		if s.routes > 0 && route == "" {
			route = s.route
			routes = plural(s.routes, "of them is a hash route", "of them are hash routes")
			if !s.listed {
				routes = "at least " + routes
			}
		}
	}
	switch {
	case all && many:
		return subject + " are hash routes that crawlers do not follow: " + hashRouteWhy + ". " + hashRouteFix
	case all:
		return subject + " is a hash route that crawlers do not follow: " + hashRouteWhy + ". " + hashRouteFix
	case route == "":
		return subject + uncrawlableTail + " Use <a href> with a real URL."
	case len(sums) > 1:
		routes = "some of them are hash routes"
	}
	return fmt.Sprintf("%s%s Use <a href> with a real URL; %s (for example %s): %s. %s",
		subject, uncrawlableTail, routes, q(route), hashRouteWhy, hashRouteFix)
}

// uncrawlableWords says why an anchor cannot be followed, in words; the
// JSON keeps the reason's value (UncrawlableLink.Reason).
func uncrawlableWords(reason string) string {
	switch reason {
	case reasonJavaScript:
		return "a javascript: address"
	case reasonFile:
		return "a file: address"
	case reasonFTP:
		return "an ftp: address"
	case reasonNoHref:
		return "no href"
	case reasonScriptFragment:
		return "only a # fragment that a script acts on"
	case reasonHashRoute:
		return "a hash route"
	}
	return strings.ReplaceAll(reason, "_", " ")
}
