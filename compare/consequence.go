package compare

import (
	"fmt"
	"strings"
)

// move is the client redirect that took the browser off the audited page:
// the rendered page is then another page, and every difference between the
// lanes follows from the redirect, not from scripts writing this page.
type move struct {
	// code is the redirect finding's code; mechanism and target its cause's.
	code, mechanism, target string
}

// movedBy is the redirect that moved the browser, nil when it stayed: the
// last navigation to another document (a script or a meta refresh), else
// the last change of path by the history API.
func (d *differ) movedBy() *move {
	rs := d.r.snap
	if rs == nil || rs.Render == nil {
		return nil
	}
	rd := rs.Render
	if c := lastDocumentRedirect(rd); c != nil {
		code := CodeRenderRedirectScript
		if c.Mechanism == RedirectMetaRefresh {
			code = CodeRenderRedirectMetaRefresh
		}
		return &move{code: code, mechanism: c.Mechanism, target: c.Target}
	}
	for i := len(rd.ClientRedirects) - 1; i >= 0; i-- {
		if c := rd.ClientRedirects[i]; c.Mechanism == RedirectHistory {
			return &move{code: CodeRenderHistoryPath, mechanism: RedirectHistory, target: c.To}
		}
	}
	if len(rd.ClientRedirects) == 0 && rd.Navigations > 0 {
		return &move{code: CodeRenderNavigated, mechanism: RedirectScript, target: rs.FinalURL}
	}
	return nil
}

// consequences turns the field differences of a page into what they are
// when the rendered page is not this page's content: consequences of the
// redirect that took the browser to another page, or of the app showing
// its not-found route. They are worded so, of info severity, with that as
// their cause; a redirect finding takes the worst severity they had, so
// the verdict opens with the redirect. Otherwise diffs are left as they are.
func (d *differ) consequences(l, soft, diffs findingList) {
	var lead *Finding
	var m *move
	subject, fix := "", ""
	if m = d.movedBy(); m != nil {
		lead = findCode(l, m.code)
		how := map[string]string{
			RedirectScript:      "a script sent the browser to",
			RedirectMetaRefresh: "a meta refresh sent the browser to",
			RedirectHistory:     "a script moved the address, with the history API, to",
		}[m.mechanism]
		subject = fmt.Sprintf("A consequence of the redirect, not of JavaScript writing this page: %s %s, and that page", how, q(m.target))
		fix = "Fix the redirect, and this difference goes with it."
	} else if lead = findCode(soft, CodeSoft404RenderOnly); lead != nil {
		subject = "A consequence of the app's not-found route, not content to serve: the browser shows the app's not-found page for this address, and that page"
		fix = "Answer 404 for addresses the app does not know, and this difference goes with it."
	}
	if lead == nil {
		return
	}
	worst := SeverityInfo
	for i := range diffs {
		f := &diffs[i]
		if severityRank(f.Severity) < severityRank(worst) {
			worst = f.Severity
		}
		f.Severity, f.ConsequenceOf, f.Cause = SeverityInfo, lead.Code, lead.Cause
		f.Message = subject + " " + d.consequenceDetail(f.Code) + " " + fix
	}
	if m != nil {
		if severityRank(worst) < severityRank(lead.Severity) {
			lead.Severity = worst
		}
		lead.Message += " " + d.stayedSentence()
	}
}

// findCode is the first finding of l with code, or nil.
func findCode(l findingList, code string) *Finding {
	for i := range l {
		if l[i].Code == code {
			return &l[i]
		}
	}
	return nil
}

// stayedSentence says what crawlers that do not follow the redirect get.
func (d *differ) stayedSentence() string {
	s := fmt.Sprintf("Crawlers that stay on this page get its server HTML: %s of the text", shareWords(d.textShare))
	if len(linkSet(d.r.page)) > 0 {
		s += fmt.Sprintf(" and %s of the links", shareWords(d.linkShare))
	}
	return s + " of the page the browser ended on."
}

// consequenceDetail says how the page the browser shows ("that page")
// differs in the field of code from this page's server HTML; it follows
// "… and that page".
func (d *differ) consequenceDetail(code string) string {
	p, r := d.p.page, d.r.page
	field, change, _ := strings.Cut(code, ".")
	value := func(noun, pv, rv string) string {
		switch {
		case rv == "":
			return fmt.Sprintf("has no %s, where this page's server HTML has %s.", noun, q(pv))
		case pv == "":
			return fmt.Sprintf("has the %s %s, which this page's server HTML does not have.", noun, q(rv))
		}
		return fmt.Sprintf("has the %s %s, where this page's server HTML has %s.", noun, q(rv), q(pv))
	}
	first := func(s []string) string {
		if len(s) == 0 {
			return ""
		}
		return s[0]
	}
	switch field {
	case "title":
		return value("title", p.Title, r.Title)
	case "meta_description":
		return value("meta description", p.MetaDescription, r.MetaDescription)
	case "canonical":
		return value("canonical URL", p.Canonical, r.Canonical)
	case "lang":
		return value("language", p.Lang, r.Lang)
	case "h1":
		return value("main heading", first(p.H1), first(r.H1))
	case "content":
		if change == "plain_only" {
			return fmt.Sprintf("lacks %d words of this page's server HTML.", p.WordCount-d.sharedWords)
		}
		return fmt.Sprintf("shows %d words, %d of them not in this page's server HTML.", r.WordCount, r.WordCount-d.sharedWords)
	case "links":
		if change == "plain_only" {
			return fmt.Sprintf("lacks %s of this page's server HTML.", plural(d.plainOnlyLinks, "link", "links"))
		}
		return fmt.Sprintf("has %s that this page's server HTML does not have.", plural(d.renderOnlyLinks, "link", "links"))
	case "json_ld":
		return fmt.Sprintf("has structured data of type %s, where this page's server HTML has %s.", typesOrNone(r.JSONLDTypes), typesOrNone(p.JSONLDTypes))
	}
	noun := map[string]string{
		"headings": "subheadings", "hreflang": "hreflang alternates", "open_graph": "Open Graph tags",
		"robots": "robots directives", "x_robots_tag": "X-Robots-Tag header",
	}[field]
	if noun == "" {
		noun = strings.ReplaceAll(field, "_", " ")
	}
	return fmt.Sprintf("has other %s than this page's server HTML.", noun)
}

// typesOrNone lists structured data types, or says there are none.
func typesOrNone(types []string) string {
	if len(types) == 0 {
		return "none"
	}
	return strings.Join(types, ", ")
}

// Nested pairs each finding a report lists with the findings that follow
// from it (ConsequenceOf its code), in the order of fs; a consequence
// whose finding is missing is listed on its own. Reports show the pairs'
// consequences under their finding.
type Nested struct {
	Finding
	Consequences []Finding
}

// Nest groups fs for display: each finding once, its consequences under
// the first finding of the code they follow from.
func Nest(fs []Finding) []Nested {
	codes := map[string]bool{}
	for _, f := range fs {
		codes[f.Code] = true
	}
	var out []Nested
	taken := map[string]bool{}
	for _, f := range fs {
		if f.ConsequenceOf != "" && codes[f.ConsequenceOf] {
			continue
		}
		n := Nested{Finding: f}
		if !taken[f.Code] {
			taken[f.Code] = true
			for _, c := range fs {
				if c.ConsequenceOf == f.Code {
					n.Consequences = append(n.Consequences, c)
				}
			}
		}
		out = append(out, n)
	}
	return out
}
