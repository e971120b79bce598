package server

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// Tones of a run state: the colour a badge or a member page gives it.
const (
	toneGood = "good"
	toneWarn = "warn"
	toneBad  = "bad"
	toneNone = "none"
)

// runState is what one re-audit of a saved site came to, in words, for the
// badge, the dashboard and the site page. Share is set only when both lanes
// fetched the page and were compared: a lane that did not run has no share.
type runState struct {
	// Words is the state as a badge says it: "blocked by robots.txt",
	// "site unreachable", "see 62%".
	Words string
	// Verdict is the longer sentence of a member page.
	Verdict string
	Tone    string
	// TextShare and LinkShare are the shares AI crawlers see, or nil.
	TextShare, LinkShare *float64
}

// notRunYet is the state of a saved site without a re-audit.
var notRunYet = runState{Words: "not run yet", Verdict: "Not run yet.", Tone: toneNone}

// stateOf says what a history entry came to. Findings decide before
// shares: a page robots.txt keeps LektaBot out of is "blocked by
// robots.txt" even when a person's request fetched it once.
func stateOf(e records.Entry) runState {
	var sum schedule.Summary
	_ = json.Unmarshal(e.Summary, &sum)
	has := func(code string) bool {
		for _, f := range sum.Findings {
			if f.Code == code {
				return true
			}
		}
		return false
	}
	siteDown := false
	for _, f := range sum.Findings {
		if strings.HasPrefix(f.Code, "site.") {
			siteDown = true
		}
	}
	switch st := audit.Status(e.Status); {
	case e.Rule != "" || has(compare.CodeRobotsDisallowed):
		return runState{Words: "blocked by robots.txt", Tone: toneBad,
			Verdict: "Blocked by robots.txt: its rules keep LektaBot out of this page, so it was not compared."}
	case st == audit.StatusSkipped && has(compare.CodeRobotsUnreachable):
		return runState{Words: "robots.txt unreachable", Tone: toneBad,
			Verdict: "Not fetched: robots.txt could not be read, so LektaBot treated the site as off limits."}
	case st == audit.StatusError && siteDown:
		return runState{Words: "site unreachable", Tone: toneBad, Verdict: "Site unreachable: nothing could be fetched."}
	case st == audit.StatusSkipped:
		return runState{Words: "skipped", Tone: toneBad, Verdict: "Skipped: nothing was fetched."}
	case st == audit.StatusBlocked:
		return runState{Words: "address refused", Tone: toneBad,
			Verdict: "Refused: the address is not a public one, so LektaBot fetched nothing."}
	case st == audit.StatusRateLimited:
		return runState{Words: "not run: rate limited", Tone: toneNone,
			Verdict: "Not run: the site's audit limits were reached; the site was not contacted."}
	case st == audit.StatusCancelled:
		return runState{Words: "cancelled", Tone: toneNone, Verdict: "Cancelled before it finished."}
	case st == audit.StatusTimeout:
		return runState{Words: "timed out", Tone: toneBad, Verdict: "Timed out: the audit did not finish within its hard limit."}
	case st == audit.StatusError:
		return runState{Words: "audit failed", Tone: toneBad, Verdict: "Failed: neither lane produced a page."}
	case has(compare.CodeRobotsNoindexRenderOnly):
		return runState{Words: "noindex only in render", Tone: toneBad, TextShare: e.TextShare, LinkShare: e.LinkShare,
			Verdict: "Noindex appears only after JavaScript runs: crawlers that render drop the page. " + sharesSentence(e.TextShare, e.LinkShare)}
	case e.TextShare == nil:
		return runState{Words: "not compared", Tone: toneWarn, Verdict: "Not compared: one lane did not produce a page."}
	}
	tone := toneGood
	switch p := percent(*e.TextShare); {
	case p < 50:
		tone = toneBad
	case p < 90:
		tone = toneWarn
	}
	return runState{Words: "see " + compare.Percent(*e.TextShare), Tone: tone,
		TextShare: e.TextShare, LinkShare: e.LinkShare, Verdict: sharesSentence(e.TextShare, e.LinkShare)}
}

// percent is a share as the whole percent compare.Percent writes: rounded
// down, so the dashboard, the badge and the report never disagree.
// sharesOf are the entry's shares, or nil when the run has none to show:
// it fetched nothing, or robots.txt keeps LektaBot out of the page.
func sharesOf(e records.Entry) (text, links *float64) {
	switch audit.Status(e.Status) {
	case audit.StatusComplete, audit.StatusPartial:
	default:
		return nil, nil
	}
	if e.Rule != "" || e.Disallowed || bytes.Contains(e.Summary, []byte(`"code":"`+compare.CodeRobotsDisallowed+`"`)) {
		return nil, nil
	}
	return e.TextShare, e.LinkShare
}

func percent(f float64) int { return int(math.Max(0, math.Min(1, f))*100 + 1e-9) }

// sharesSentence says the shares AI crawlers see: "AI crawlers see 62% of
// the text and 80% of the links."
func sharesSentence(text, links *float64) string {
	switch {
	case text == nil:
		return ""
	case links == nil:
		return "AI crawlers see " + compare.Percent(*text) + " of the text."
	}
	return "AI crawlers see " + compare.Percent(*text) + " of the text and " + compare.Percent(*links) + " of the links."
}

// openCritical names the entry's critical findings by their titles.
func openCritical(e records.Entry) []string {
	var sum schedule.Summary
	_ = json.Unmarshal(e.Summary, &sum)
	var out []string
	for _, f := range sum.Findings {
		if f.Severity == string(compare.SeverityCritical) {
			out = append(out, findingName(f))
		}
	}
	return out
}

// findingName is a finding's title, with its lane when it has one.
func findingName(f schedule.FindingKey) string {
	t := compare.CodeTitle(f.Code)
	switch f.Lane {
	case string(compare.LanePlain):
		t += " (plain)"
	case string(compare.LaneRender):
		t += " (rendered)"
	}
	return t
}
