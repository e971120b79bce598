package audit

import (
	"slices"
	"strings"

	"lekta.dev/lekta/compare"
)

// findings prints the report's findings, most serious first, each with its
// cause and, indented under it, the findings that follow from it.
func (p *printer) findings(r *Report) {
	p.line("")
	if len(r.Findings) == 0 {
		p.line("FINDINGS  none: both lanes agree on everything Lekta compares")
		return
	}
	p.line("FINDINGS")
	fs := slices.SortedStableFunc(slices.Values(r.Findings), func(a, b compare.Finding) int { return rank(a.Severity) - rank(b.Severity) })
	for _, f := range compare.Nest(fs) {
		head := compare.CodeTitle(f.Code)
		if f.Lane != "" {
			head += " (" + string(f.Lane) + " lane)"
		}
		p.para("  "+fit(strings.ToUpper(string(f.Severity)), 9), head)
		p.para("           ", f.Message+" ["+f.Code+"]")
		if f.Cause != nil {
			p.para("             ", causeText(f.Cause, r.URL))
		}
		for _, c := range f.Consequences {
			p.para("           - ", c.Message+" ["+c.Code+"]")
		}
	}
}

// scriptWidth is how many characters of a script URL a cause line shows.
const scriptWidth = 50

// causeText says a finding's cause for the terminal: every string from
// the page escaped (cleanText), script URLs shortened in the middle.
func causeText(c *compare.Cause, pageURL string) string {
	return compare.CauseWords(c, compare.CauseShow{
		Script: func(u string) string { return cleanText(compare.ScriptLabel(u, pageURL, scriptWidth)) },
		Text:   cleanText,
	})
}

func rank(s compare.Severity) int {
	switch s {
	case compare.SeverityCritical:
		return 0
	case compare.SeverityWarning:
		return 1
	}
	return 2
}
