package schedule

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
)

// LaneSummary is what change tracking keeps of one lane's extract.
type LaneSummary struct {
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Canonical   string   `json:"canonical"`
	Robots      string   `json:"robots"`
	H1          []string `json:"h1"`
	JSONLDTypes []string `json:"json_ld_types"`
	WordCount   int      `json:"word_count"`
	LinkCount   int      `json:"link_count"`
	// Present is false when the lane produced no document.
	Present bool `json:"present"`
}

// FindingKey names a finding for change tracking: code, severity, lane.
type FindingKey struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Lane     string `json:"lane,omitempty"`
}

// CauseKey is what change tracking keeps of a finding's cause: who made
// the difference, not where in the script or when, so a cause that only
// moved is the same cause. Script is the script as the report shows it
// (compare.ScriptLabel: the path for the page's own host, without the
// query), empty for an inline script.
type CauseKey struct {
	Code      string `json:"code"`
	Lane      string `json:"lane,omitempty"`
	Kind      string `json:"kind"`
	Script    string `json:"script,omitempty"`
	Inline    bool   `json:"inline,omitempty"`
	Request   string `json:"request,omitempty"`
	Element   string `json:"element,omitempty"`
	Mechanism string `json:"mechanism,omitempty"`
	Target    string `json:"target,omitempty"`
}

// CauseChange is a finding of both re-audits whose cause changed.
type CauseChange struct {
	Before CauseKey `json:"before"`
	After  CauseKey `json:"after"`
}

// Summary is what a history entry keeps of its report, to be compared
// with the next one: derived values only.
type Summary struct {
	Status    string       `json:"status"`
	TextShare *float64     `json:"text_share,omitempty"`
	LinkShare *float64     `json:"link_share,omitempty"`
	Plain     LaneSummary  `json:"plain"`
	Render    LaneSummary  `json:"render"`
	Findings  []FindingKey `json:"findings"`
	// Causes are the causes of the findings that have one, a finding's
	// code and lane once; absent in entries older than causes.
	Causes []CauseKey `json:"causes,omitempty"`
	// Cached marks a run answered from the result cache (a member's run
	// now while a fresh result was cached), CacheAgeS the result's age.
	Cached    bool  `json:"cached,omitempty"`
	CacheAgeS int64 `json:"cache_age_s,omitempty"`
	// StartedMS is when the audit behind the report started (Unix ms):
	// two cached answers of one result share it, whatever their ids.
	StartedMS int64 `json:"started_ms,omitempty"`
}

// FieldChange is one field of one lane that changed since the previous
// re-audit.
type FieldChange struct {
	Lane   string `json:"lane"`
	Field  string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Changes is a re-audit compared with the previous one of the same site.
type Changes struct {
	// First is true when there was no previous re-audit to compare with.
	First    bool          `json:"first"`
	Fields   []FieldChange `json:"fields"`
	Appeared []FindingKey  `json:"appeared"`
	Resolved []FindingKey  `json:"resolved"`
	// Causes are the findings of both re-audits whose cause changed; a
	// cause the previous re-audit did not record is not a change.
	Causes []CauseChange `json:"causes,omitempty"`
	// StatusBefore is set when the status changed.
	StatusBefore    string   `json:"status_before,omitempty"`
	TextShareBefore *float64 `json:"text_share_before,omitempty"`
	LinkShareBefore *float64 `json:"link_share_before,omitempty"`
	// Regression is true on a new critical finding, a share down by more
	// than 10 points, or the page becoming skipped, blocked or an error;
	// Reasons says which, in words.
	Regression bool     `json:"regression"`
	Reasons    []string `json:"reasons"`
}

// Summarize keeps what change tracking compares of a report.
func Summarize(r *audit.Report) Summary {
	s := Summary{Status: string(r.Status), Findings: []FindingKey{}, Cached: r.Cached, CacheAgeS: r.CacheAgeS}
	if !r.StartedAt.IsZero() {
		s.StartedMS = r.StartedAt.UnixMilli()
	}
	if r.Verdict != nil {
		s.TextShare, s.LinkShare = r.Verdict.TextShare, r.Verdict.LinkShare
	}
	s.Plain = laneSummary(r.Lanes.Plain.Page)
	s.Render = laneSummary(r.Lanes.Render.Page)
	for _, f := range r.Findings {
		k := FindingKey{Code: f.Code, Severity: string(f.Severity), Lane: string(f.Lane)}
		if !slices.Contains(s.Findings, k) {
			s.Findings = append(s.Findings, k)
		}
		if f.Cause != nil && findCause(s.Causes, k.Code, k.Lane) < 0 {
			s.Causes = append(s.Causes, causeKey(f, r.URL))
		}
	}
	return s
}

// causeKey keeps what names the cause of f, a finding of the page at pageURL.
func causeKey(f compare.Finding, pageURL string) CauseKey {
	c := f.Cause
	k := CauseKey{Code: f.Code, Lane: string(f.Lane), Kind: string(c.Kind), Inline: c.Inline,
		Request: c.RequestPath, Element: c.Element, Mechanism: c.Mechanism, Target: c.Target}
	switch {
	case c.Source != nil:
		// The owner's original file: a rebuilt bundle is the same cause.
		k.Script = c.Source.File
	case c.Defined != nil:
		// The owner's file that holds what a library rendered.
		k.Script = c.Defined.File
	case c.Library != "" && c.Line == 0 && c.ScriptURL != "":
		k.Script = c.Library
	case c.ScriptURL != "" && !c.Inline:
		k.Script = unhashed(compare.ScriptLabel(c.ScriptURL, pageURL, math.MaxInt))
	}
	return k
}

// bundleHash is a content hash in a bundle's file name ("main-IERDXVEM.js",
// "index.3f9c2a1b.js", "chunk-4f1d9e2a.mjs").
var bundleHash = regexp.MustCompile(`[-.~]([A-Za-z0-9_]{8,})(\.m?js)$`)

// unhashed is a script label without its bundle hash, so that a rebuilt
// bundle is not another cause.
func unhashed(label string) string {
	m := bundleHash.FindStringSubmatchIndex(label)
	if m == nil {
		return label
	}
	h := label[m[2]:m[3]]
	if strings.ToLower(h) == h && !strings.ContainsAny(h, "0123456789") {
		return label // a word, not a hash ("-products.js")
	}
	return label[:m[0]] + label[m[4]:]
}

// findCause is the index of the cause of code and lane in ks, or -1.
func findCause(ks []CauseKey, code, lane string) int {
	return slices.IndexFunc(ks, func(k CauseKey) bool { return k.Code == code && k.Lane == lane })
}

// causeChanges lists the findings of both summaries whose cause changed.
func causeChanges(prev, cur []CauseKey) []CauseChange {
	var out []CauseChange
	for _, after := range cur {
		if i := findCause(prev, after.Code, after.Lane); i >= 0 && prev[i] != after {
			out = append(out, CauseChange{Before: prev[i], After: after})
		}
	}
	return out
}

func laneSummary(p *compare.Page) LaneSummary {
	if p == nil {
		return LaneSummary{H1: []string{}, JSONLDTypes: []string{}}
	}
	robots := p.MetaRobots
	if len(p.XRobotsTag) > 0 {
		robots = strings.TrimPrefix(robots+"; X-Robots-Tag: "+strings.Join(p.XRobotsTag, ", "), "; ")
	}
	types := slices.Clone(p.JSONLDTypes)
	slices.Sort(types)
	return LaneSummary{
		Title: p.Title, Description: p.MetaDescription, Canonical: p.Canonical, Robots: robots,
		H1: append([]string{}, p.H1...), JSONLDTypes: append([]string{}, types...),
		WordCount: p.WordCount, LinkCount: p.LinkCount, Present: true,
	}
}

// Compare says what changed from prev (nil: no previous re-audit) to cur.
func Compare(prev *Summary, cur Summary) Changes {
	c := Changes{Fields: []FieldChange{}, Appeared: []FindingKey{}, Resolved: []FindingKey{}, Reasons: []string{}}
	if prev == nil {
		c.First = true
		if bad(cur.Status) {
			c.Regression = true
			c.Reasons = append(c.Reasons, "the page's re-audit is "+cur.Status)
		}
		return c
	}
	if prev.Status != cur.Status {
		c.StatusBefore = prev.Status
		if bad(cur.Status) && !bad(prev.Status) {
			c.Regression = true
			c.Reasons = append(c.Reasons, fmt.Sprintf("the re-audit became %s (it was %s)", cur.Status, prev.Status))
		}
	}
	c.Fields = append(c.Fields, laneChanges("plain", prev.Plain, cur.Plain)...)
	c.Fields = append(c.Fields, laneChanges("render", prev.Render, cur.Render)...)
	for _, f := range cur.Findings {
		if !slices.Contains(prev.Findings, f) {
			c.Appeared = append(c.Appeared, f)
			if f.Severity == string(compare.SeverityCritical) {
				c.Regression = true
				c.Reasons = append(c.Reasons, "new critical finding "+f.Code)
			}
		}
	}
	for _, f := range prev.Findings {
		if !slices.Contains(cur.Findings, f) {
			c.Resolved = append(c.Resolved, f)
		}
	}
	c.Causes = causeChanges(prev.Causes, cur.Causes)
	c.TextShareBefore, c.LinkShareBefore = prev.TextShare, prev.LinkShare
	if dropped(prev.TextShare, cur.TextShare) {
		c.Regression = true
		c.Reasons = append(c.Reasons, fmt.Sprintf("the text share AI crawlers see fell from %s to %s", pct(prev.TextShare), pct(cur.TextShare)))
	}
	if dropped(prev.LinkShare, cur.LinkShare) {
		c.Regression = true
		c.Reasons = append(c.Reasons, fmt.Sprintf("the link share AI crawlers see fell from %s to %s", pct(prev.LinkShare), pct(cur.LinkShare)))
	}
	return c
}

// bad is a status that counts as a regression when a page reaches it.
func bad(status string) bool {
	switch audit.Status(status) {
	case audit.StatusSkipped, audit.StatusBlocked, audit.StatusError:
		return true
	}
	return false
}

// dropped reports a share down by more than 10 points.
func dropped(before, after *float64) bool {
	return before != nil && after != nil && *before-*after > 0.10+1e-9
}

func pct(f *float64) string {
	if f == nil {
		return "none"
	}
	return fmt.Sprintf("%.0f%%", math.Round(*f*100))
}

// laneChanges lists the fields of one lane that changed; the word count
// only when it moved by more than 10%.
func laneChanges(lane string, a, b LaneSummary) []FieldChange {
	var out []FieldChange
	add := func(field, x, y string) {
		if x != y {
			out = append(out, FieldChange{Lane: lane, Field: field, Before: x, After: y})
		}
	}
	if a.Present != b.Present {
		add("document", present(a.Present), present(b.Present))
		return out
	}
	add("title", a.Title, b.Title)
	add("description", a.Description, b.Description)
	add("canonical", a.Canonical, b.Canonical)
	add("robots", a.Robots, b.Robots)
	add("h1", strings.Join(a.H1, " | "), strings.Join(b.H1, " | "))
	add("json_ld_types", strings.Join(a.JSONLDTypes, ", "), strings.Join(b.JSONLDTypes, ", "))
	if math.Abs(float64(b.WordCount-a.WordCount)) > 0.10*float64(max(a.WordCount, 1)) {
		add("word_count", fmt.Sprint(a.WordCount), fmt.Sprint(b.WordCount))
	}
	add("link_count", fmt.Sprint(a.LinkCount), fmt.Sprint(b.LinkCount))
	return out
}

func present(p bool) string {
	if p {
		return "a document"
	}
	return "no document"
}
