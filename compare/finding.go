package compare

// Severity ranks a finding.
type Severity string

// Severities, most serious first.
const (
	SeverityCritical Severity = "critical"
	SeverityWarning  Severity = "warning"
	SeverityInfo     Severity = "info"
)

// Finding is one thing the report tells a site owner. Codes are stable dotted
// names (title.render_only) listed in docs/report.md.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Lane is the lane the finding is about, or "" for both.
	Lane Lane `json:"lane,omitempty"`
	// Cause is why the difference exists, when the audit could tell.
	Cause *Cause `json:"cause,omitempty"`
	// ConsequenceOf is the code of the finding this one follows from: a
	// difference between the lanes that exists only because a redirect
	// took the browser to another page (render.redirect_script,
	// render.redirect_meta_refresh, render.history_path,
	// render.navigated). Such a finding is info; reports show it under
	// that finding.
	ConsequenceOf string `json:"consequence_of,omitempty"`
}

// Change says how a field differs between the lanes.
type Change string

// The four kinds of change.
const (
	ChangeSame       Change = "same"
	ChangeChanged    Change = "changed"
	ChangePlainOnly  Change = "only_plain"
	ChangeRenderOnly Change = "only_render"
)

// FieldDiff is one field of the side-by-side comparison. Plain and Render are
// the field's value in each lane, as JSON values (string, number, list).
type FieldDiff struct {
	Field  string `json:"field"`
	Plain  any    `json:"plain"`
	Render any    `json:"render"`
	Change Change `json:"change"`
}

// Verdict is the one-sentence answer to "what do AI fetchers miss?".
type Verdict struct {
	// Summary is one sentence for people.
	Summary string `json:"summary"`
	// TextShare is the share (0..1) of the rendered page's words the plain lane also has.
	TextShare float64 `json:"text_share"`
	// LinkShare is the share (0..1) of the rendered page's links the plain lane also has.
	LinkShare float64 `json:"link_share"`
	// hasLinks: the rendered page has links, so LinkShare means something.
	hasLinks bool
}

// Observed is one lane's snapshot with its extracted page. A lane that
// produced nothing is a nil *Observed.
type Observed struct {
	Snapshot *Snapshot
	Page     *Page
}

// Result is what Diff produces.
type Result struct {
	Diff     []FieldDiff `json:"diff"`
	Findings []Finding   `json:"findings"`
	Verdict  Verdict     `json:"verdict"`
}
