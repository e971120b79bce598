package server

import (
	"cmp"
	"slices"

	"lekta.dev/lekta/compare"
)

// findingGroup holds the findings of one severity.
type findingGroup struct {
	Severity string
	Findings []findingView
}

// findingView is a finding with its code's explanation.
type findingView struct {
	compare.Finding
	// Title names the finding in words; Explanation adds to the message
	// only what it does not already say (compare.Explain).
	Title       string
	Explanation string
	// CauseLine says the finding's cause in words (compare.CauseWords),
	// CauseURL the full URL of the script its shortened path stands for.
	CauseLine string
	CauseURL  string
	// Consequences are the findings that follow from this one (their
	// ConsequenceOf names its code), shown under it.
	Consequences []findingView
}

// scriptWidth is how many characters of a script URL a cause line shows:
// the page wraps a long path (.cause breaks anywhere), so only a path
// longer than any real one is cut; CauseURL has all of it.
const scriptWidth = 160

// withCause adds a finding's cause line. html/template escapes what comes
// from the page, so the strings go in as they are, script URLs shortened.
func (fv *findingView) withCause(pageURL string) {
	c := fv.Finding.Cause
	if c == nil {
		return
	}
	fv.CauseLine = compare.Capitalise(compare.CauseWords(c, compare.CauseShow{
		Script: func(u string) string { return compare.ScriptLabel(u, pageURL, scriptWidth) },
		Text:   func(s string) string { return s },
	}))
	if c.ScriptURL != "" && !c.Inline {
		fv.CauseURL = c.ScriptURL
	}
}

// severityOrder ranks severities, most serious first.
var severityOrder = []compare.Severity{compare.SeverityCritical, compare.SeverityWarning, compare.SeverityInfo}

// groupFindings groups findings by severity, most serious first; a
// finding that follows from another (ConsequenceOf) is shown under it.
func groupFindings(fs []compare.Finding, pageURL string) []findingGroup {
	var out []findingGroup
	rank := func(s compare.Severity) int {
		if i := slices.Index(severityOrder, s); i >= 0 {
			return i
		}
		return len(severityOrder)
	}
	sorted := slices.SortedStableFunc(slices.Values(fs), func(a, b compare.Finding) int {
		return cmp.Compare(rank(a.Severity), rank(b.Severity))
	})
	view := func(f compare.Finding) findingView {
		fv := findingView{Finding: f, Title: compare.CodeTitle(f.Code), Explanation: compare.Explain(f)}
		fv.withCause(pageURL)
		return fv
	}
	for _, n := range compare.Nest(sorted) {
		if len(out) == 0 || out[len(out)-1].Severity != string(n.Severity) {
			out = append(out, findingGroup{Severity: string(n.Severity)})
		}
		fv := view(n.Finding)
		for _, c := range n.Consequences {
			fv.Consequences = append(fv.Consequences, view(c))
		}
		g := &out[len(out)-1]
		g.Findings = append(g.Findings, fv)
	}
	return out
}
