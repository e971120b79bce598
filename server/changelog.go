package server

import (
	"encoding/json"
	"fmt"
	"strconv"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// changeFields name change tracking's fields as the report page names them.
var changeFields = map[string]string{
	"document":      "Page",
	"title":         compare.FieldLabel("title"),
	"description":   compare.FieldLabel("meta_description"),
	"canonical":     compare.FieldLabel("canonical"),
	"robots":        compare.FieldLabel("meta_robots"),
	"h1":            compare.FieldLabel("h1"),
	"json_ld_types": compare.FieldLabel("json_ld_types"),
	"word_count":    compare.FieldLabel("word_count"),
	"link_count":    compare.FieldLabel("links"),
}

// numericFields are written without quotes.
var numericFields = map[string]bool{"word_count": true, "link_count": true}

// laneNames are the report page's column names of the two lanes.
var laneNames = map[string]string{"plain": "plain", "render": "rendered"}

// changeLog says in words what changed between a history entry and the one
// before it, each change once: the state, the shares, the fields and the
// findings by their titles. The first entry is "First audit", and a run
// that fetched nothing says what happened instead of "no change".
func changeLog(e records.Entry) []string {
	var c schedule.Changes
	_ = json.Unmarshal(e.Changes, &c)
	st := stateOf(e)
	fetched := e.Status == string(audit.StatusComplete) || e.Status == string(audit.StatusPartial)
	if c.First {
		if !fetched {
			return []string{"First audit: " + st.Words + "."}
		}
		return []string{"First audit: nothing to compare with yet."}
	}
	// A run that fetched nothing changed nothing: its findings are not
	// resolved, only unchecked.
	if !fetched {
		return []string{compare.Capitalise(st.Words) + ": nothing was fetched or compared this time."}
	}
	var out []string
	afterNothing := false
	switch c.StatusBefore {
	case "":
	case "complete":
		out = append(out, "One lane did not finish this time.")
	case "partial":
		out = append(out, "Both lanes finished this time.")
	default:
		afterNothing = true
		out = append(out, "Fetched again after a run that fetched nothing ("+stateOf(records.Entry{Status: c.StatusBefore}).Words+").")
	}
	out = append(out, shareChange("text", c.TextShareBefore, e.TextShare)...)
	out = append(out, shareChange("links", c.LinkShareBefore, e.LinkShare)...)
	for _, f := range c.Fields {
		if afterNothing && f.Field == "document" {
			continue // the line above says it
		}
		out = append(out, fieldChange(f))
	}
	for _, f := range c.Appeared {
		prefix := "New finding: "
		if f.Severity == string(compare.SeverityCritical) {
			prefix = "New critical finding: "
		}
		out = append(out, prefix+findingName(f)+".")
	}
	for _, f := range c.Resolved {
		out = append(out, "Resolved: "+findingName(f)+".")
	}
	for _, cc := range c.Causes {
		out = append(out, causeChange(cc))
	}
	return out
}

// causeChange says that a finding's cause changed, naming the new cause
// and the old: "The title is now set by /js/new.js (was /js/app.js)." The
// script is as change tracking kept it (schedule.CauseKey); html/template
// escapes what came from the page.
func causeChange(cc schedule.CauseChange) string {
	subject := "The " + compare.LowerFirst(compare.CodeSubject(cc.After.Code))
	after, before := causePhrase(cc.After), causePhrase(cc.Before)
	was := before.verb + " " + before.agent
	if before.verb == after.verb {
		was = before.agent
	}
	return fmt.Sprintf("%s is now %s %s (was %s).", subject, after.verb, after.agent, was)
}

// phrase is a cause in a change sentence: how ("set by") and who.
type phrase struct{ verb, agent string }

// causePhrase names a kept cause in words (compare.CauseAgent).
func causePhrase(k schedule.CauseKey) phrase {
	c := &compare.Cause{Kind: compare.CauseKind(k.Kind), ScriptURL: k.Script, Inline: k.Inline, RequestPath: k.Request,
		Element: k.Element, Mechanism: k.Mechanism, Target: k.Target}
	same := func(s string) string { return s }
	agent := compare.CauseAgent(c, compare.CauseShow{Script: same, Text: same})
	switch c.Kind {
	case compare.CauseScript:
		return phrase{"set by", agent}
	case compare.CauseRequest:
		return phrase{"filled from", agent}
	case compare.CauseParser:
		return phrase{"pushed out of the head by", agent}
	}
	return phrase{"caused by", agent}
}

// shareChange says a share that moved by at least a point.
func shareChange(what string, before, after *float64) []string {
	if before == nil || after == nil || percent(*before) == percent(*after) {
		return nil
	}
	verb := "rose"
	if *after < *before {
		verb = "fell"
	}
	noun := "text"
	if what == "links" {
		noun = "links"
	}
	return []string{fmt.Sprintf("The share of the %s AI crawlers see %s from %d%% to %d%%.", noun, verb, percent(*before), percent(*after))}
}

// fieldChange writes one field's change: "Title (rendered): “Old” → “New”".
func fieldChange(f schedule.FieldChange) string {
	name, ok := changeFields[f.Field]
	if !ok {
		name = compare.FieldLabel(f.Field)
	}
	lane := laneNames[f.Lane]
	if lane == "" {
		lane = f.Lane
	}
	show := func(v string) string {
		if numericFields[f.Field] {
			if n, err := strconv.Atoi(v); err == nil {
				return strconv.Itoa(n)
			}
		}
		if f.Field == "document" {
			return v
		}
		if v == "" {
			return "none"
		}
		return "“" + clip(v, 80) + "”"
	}
	return fmt.Sprintf("%s (%s): %s → %s", name, lane, show(f.Before), show(f.After))
}

// clip cuts s to n runes, with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
