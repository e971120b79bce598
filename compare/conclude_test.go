package compare

import (
	"strings"
	"testing"
)

// TestConcludeWorstLeads: issue 14 point 4, a report with a critical
// finding never opens with good news; the counts and the colour come from
// every finding, the pipeline's included.
func TestConcludeWorstLeads(t *testing.T) {
	t.Parallel()
	res := runDiffCase(pair(doc("", ""), doc("", `<p>`+manyWords+`</p>`), func(p, r *Snapshot) {
		p.Body = []byte(strings.Replace(string(p.Body), "<title>Kettle</title>", "", 1))
	}))
	c := Conclude(res.Findings, &res.Verdict, true, nil)
	lead, _ := Lead(res.Findings)
	if lead.Severity != SeverityCritical {
		t.Fatalf("lead %+v is not critical", lead)
	}
	if !strings.HasPrefix(c.Summary, FirstSentence(lead.Message)) {
		t.Errorf("summary %q does not open with the worst finding %q", c.Summary, lead.Message)
	}
	if c.Severity != SeverityCritical || c.Critical == 0 {
		t.Errorf("severity %s, %d critical", c.Severity, c.Critical)
	}
	if c.TextShare == nil || c.LinkShare == nil {
		t.Error("compared lanes without shares")
	}
	for _, good := range []string{"see what a browser shows"} {
		if strings.HasPrefix(c.Summary, "AI crawlers that do not run JavaScript "+good) {
			t.Errorf("summary opens with good news: %q", c.Summary)
		}
	}
}

func TestConcludeWithoutComparison(t *testing.T) {
	t.Parallel()
	fs := []Finding{
		{Code: CodeLaneError, Severity: SeverityWarning, Message: "The plain lane did not finish."},
		{Code: CodeSiteDNS, Severity: SeverityCritical, Message: "The site cannot be reached: the host name “x.invalid” does not resolve. Nothing was fetched."},
	}
	c := Conclude(fs, nil, false, nil)
	if c.Summary != "The site cannot be reached: the host name “x.invalid” does not resolve." {
		t.Errorf("summary %q", c.Summary)
	}
	if c.TextShare != nil || c.Critical != 1 || c.Warnings != 1 || c.Severity != SeverityCritical {
		t.Errorf("conclusion %+v", c)
	}
	if got := Conclude(nil, nil, false, nil); got.Severity != SeverityNone || got.Summary == "" {
		t.Errorf("empty report: %+v", got)
	}
}

func TestFirstSentence(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"One. Two.":                        "One.",
		"The title “A. B” is set. Then.":   "The title “A. B” is set.",
		"No stop":                          "No stop",
		"Version 1.2 is out (see v. 3). X": "Version 1.2 is out (see v. 3).",
	} {
		if got := FirstSentence(in); got != want {
			t.Errorf("FirstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestExplainAddsWhatTheMessageLacks: the report page shows a finding's
// message once, and of the code's explanation only what the message does
// not already say.
func TestExplainAddsWhatTheMessageLacks(t *testing.T) {
	t.Parallel()
	var all []Finding
	for _, tc := range diffCases {
		all = append(all, runDiffCase(tc.in).Findings...)
	}
	for _, f := range all {
		ex := Explain(f)
		for _, s := range Sentences(ex) {
			for _, m := range Sentences(f.Message) {
				if NearCopy(s, m) {
					t.Errorf("%s: explanation sentence %q repeats the message's %q", f.Code, s, m)
				}
			}
		}
	}
	f := Finding{Code: CodeTitleRenderOnly, Message: "The title “Kettle” is set by JavaScript; AI crawlers that do not render see a page without a title. Put it in the server HTML."}
	if ex := Explain(f); strings.Contains(ex, "AI crawlers and other fetchers that do not render see a page without a title") {
		t.Errorf("explanation %q repeats the message", ex)
	}
}

func TestDisplayValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v     any
		items []string
		list  bool
	}{
		{nil, nil, false},
		{"", nil, false},
		{"Kettle", []string{"Kettle"}, false},
		{true, []string{"yes"}, false},
		{42, []string{"42"}, false},
		{map[string]string{"googlebot": "noindex"}, []string{"googlebot: noindex"}, true},
		{OpenGraph{Title: "T", Image: "https://x/i.png"}, []string{"image: https://x/i.png", "title: T"}, true},
		{[]Alternate{{Lang: "de", Href: "https://x/de"}}, []string{"de → https://x/de"}, true},
		{[]string{}, []string{}, true},
	}
	for _, tc := range cases {
		items, list := DisplayValue(tc.v)
		if list != tc.list || strings.Join(items, "|") != strings.Join(tc.items, "|") {
			t.Errorf("DisplayValue(%#v) = %q %v, want %q %v", tc.v, items, list, tc.items, tc.list)
		}
		for _, it := range items {
			if strings.Contains(it, "map[") || strings.Contains(it, "{") {
				t.Errorf("DisplayValue(%#v) shows Go formatting: %q", tc.v, it)
			}
		}
	}
	if got := FieldLabel("meta_description"); got != "Meta description" {
		t.Errorf("FieldLabel = %q", got)
	}
	if got := ChangeLabel(ChangeRenderOnly); got != "only after JavaScript" {
		t.Errorf("ChangeLabel = %q", got)
	}
	for _, c := range FindingCodes() {
		if title := CodeTitle(c.Code); strings.Contains(title, "_") {
			t.Errorf("CodeTitle(%s) = %q has an underscore", c.Code, title)
		}
	}
}
