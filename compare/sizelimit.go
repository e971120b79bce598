package compare

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// GooglebotHTMLLimit is how much of an HTML file Google documents that
// Googlebot reads: the first 2 MB (Google's crawler overview). What lies
// past it is not indexed by Google.
const GooglebotHTMLLimit = 2 << 20

// sizeFindings reports server HTML larger than GooglebotHTMLLimit, with
// what lies past the limit: the head fields Googlebot would not see and
// the share of the words and links.
func (d *differ) sizeFindings(l *findingList) {
	ps, p := d.p.snap, d.p.htmlPage()
	if ps == nil || p == nil || len(ps.Body) <= GooglebotHTMLLimit {
		return
	}
	cut := *ps
	cut.Body = validPrefix(ps.Body, GooglebotHTMLLimit)
	cut.Render = nil
	head := Extract(&cut)
	words := ratio(p.WordCount-sharedWords(head, p), p.WordCount)
	if p.WordCount == 0 {
		words = 0
	}
	all, seen := linkSet(p), linkSet(head)
	past := 0
	for k := range all {
		if _, ok := seen[k]; !ok {
			past++
		}
	}
	links := 0.0
	if len(all) > 0 {
		links = float64(past) / float64(len(all))
	}
	msg := fmt.Sprintf("The server HTML is %s, and Google documents that Googlebot reads only the first 2 MB of an HTML file. Past that point lie %s of the page's words and %s of its links",
		Size(int64(len(ps.Body))), Percent(words), Percent(links))
	if fields := fieldsPast(head, p); len(fields) > 0 {
		msg += ", and " + joinAnd(fields)
	}
	msg += ". Put what matters first (head, main content, links) or make the page smaller: inline data, styles and scripts are the usual bulk."
	if ps.Truncated {
		msg += " The plain lane read only the first " + Size(int64(len(ps.Body))) + "; the page is larger still."
	}
	l.add(CodeHTMLOverGooglebotLimit, LanePlain, "%s", msg)
}

// fieldsPast names the fields of full that the first part of the page,
// head, does not have or has otherwise.
func fieldsPast(head, full *Page) []string {
	var out []string
	add := func(differs bool, name string) {
		if differs {
			out = append(out, name)
		}
	}
	add(head.Title != full.Title, "the title")
	add(head.MetaDescription != full.MetaDescription, "the meta description")
	add(head.Canonical != full.Canonical, "the canonical link")
	add(head.Noindex != full.Noindex || head.MetaRobots != full.MetaRobots, "the robots directives")
	add(!slices.Equal(alternateKeys(head), alternateKeys(full)), "hreflang alternates")
	add(!slices.Equal(head.H1, full.H1), "the main heading")
	if only := missingStrings(head.JSONLDTypes, full.JSONLDTypes); len(only) > 0 {
		out = append(out, "structured data of type "+strings.Join(only, ", "))
	}
	return out
}

// validPrefix is b cut to at most n bytes, without a broken UTF-8 sequence
// at the end.
func validPrefix(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size != 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}
