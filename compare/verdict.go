package compare

import (
	"fmt"
	"strings"
)

// verdictLabels names, for the verdict sentence, what a critical finding is about.
var verdictLabels = map[string]string{
	CodeTitleRenderOnly:         "the title",
	CodeCanonicalChanged:        "the canonical URL",
	CodeRobotsNoindexRenderOnly: "the noindex directive",
	CodeRobotsNoindexPlainOnly:  "the noindex directive",
	CodeLinksRenderOnly:         "the links",
	CodeContentRenderOnly:       "the text",
	CodeStatusDiffers:           "the HTTP status",
}

// verdict sums the comparison up in one sentence with the two shares.
func (d *differ) verdict(findings []Finding) Verdict {
	v := Verdict{TextShare: d.textShare, LinkShare: d.linkShare, hasLinks: d.r.page != nil && len(linkSet(d.r.page)) > 0}
	if v.Summary = d.otherSummary(findings); v.Summary != "" {
		return v
	}
	p, r := d.p.page, d.r.page
	seen := map[string]bool{}
	var labels []string
	warnings := 0
	for _, f := range findings {
		if f.Lane == "" && (checkCodes[f.Code] || f.Code == CodeStatusNotOK || f.Code == CodePageSlow) {
			continue // about the page, not a difference between the lanes
		}
		switch f.Severity {
		case SeverityCritical:
			label := verdictLabels[f.Code]
			if label == "" {
				label, _, _ = strings.Cut(f.Code, ".")
				label = "the " + strings.ReplaceAll(label, "_", " ")
			}
			if !seen[label] {
				seen[label] = true
				labels = append(labels, label)
			}
		case SeverityWarning:
			warnings++
		}
	}
	sees := fmt.Sprintf("%s of the rendered text", shareWords(d.textShare))
	has := fmt.Sprintf("%s of the rendered text", onlyShare(d.textShare))
	if len(linkSet(r)) > 0 {
		sees += fmt.Sprintf(" and %s of its links", shareWords(d.linkShare))
		has += fmt.Sprintf(" and %s of its links", strings.TrimPrefix(shareWords(d.linkShare), "only "))
	}
	switch {
	case d.textShare < 0.5:
		v.Summary = fmt.Sprintf("AI crawlers that do not run JavaScript miss most of this page: the server HTML has %s.", has)
	case len(labels) > 0:
		v.Summary = fmt.Sprintf("AI crawlers that do not run JavaScript see %s, but the server HTML and the rendered page differ in %s.", sees, joinAnd(labels))
	case p.WordCount-d.sharedWords >= minMissingWords && ratio(d.sharedWords, p.WordCount) < 0.5:
		v.Summary = fmt.Sprintf("AI crawlers that do not run JavaScript see %s, and more: most of the server HTML's text is not shown in the browser.", sees)
	case warnings > 0:
		v.Summary = fmt.Sprintf("AI crawlers that do not run JavaScript see %s; %s listed below.", sees, plural(warnings, "smaller difference is", "smaller differences are"))
	default:
		v.Summary = fmt.Sprintf("AI crawlers that do not run JavaScript see what a browser shows: %s.", sees)
	}
	return v
}

// otherSummary is the verdict's summary when the lanes' pages are not
// this page's two views: a lane without a document, a browser a redirect
// took elsewhere, the app's not-found route; "" otherwise.
func (d *differ) otherSummary(findings []Finding) string {
	p, r := d.p.page, d.r.page
	switch {
	case p == nil && r == nil:
		return "Neither lane produced a document, so there is nothing to compare."
	case p == nil:
		return "Only the browser produced a document, so what AI crawlers receive is unknown."
	case r == nil:
		return "Only the plain fetch produced a document, so it could not be compared with what a browser shows."
	case d.movedBy() != nil:
		// The rendered page is another page: the redirect finding leads,
		// and this says what staying crawlers get.
		return d.stayedSentence()
	case findCode(findings, CodeSoft404RenderOnly) != nil:
		return "What the browser shows at this address is the app's not-found page, so the differences below are that page's, not content to serve in the HTML."
	}
	return ""
}

// shareWords says a share in words: "all", "none" or a percentage.
func shareWords(share float64) string {
	switch p := Percent(share); {
	case share >= 1:
		return "all"
	case p == "0%":
		return "none"
	default:
		return p
	}
}

// joinAnd joins phrases as "a, b and c".
func joinAnd(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
