package audit

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/corpus"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/render"
)

// pageExpect is what a corpus page's report must say. Pairs are [plain,
// render].
type pageExpect struct {
	Status [2]int    `json:"status"`
	Final  [2]string `json:"final"`
	Title  [2]string `json:"title"`
	H1     [2]string `json:"h1"`
	Words  [2]int    `json:"words"`
	Links  [2]int    `json:"links"`
	// Findings are the report's findings, each "severity code", then
	// "lane=…" when it is about one lane, "of=…" when it is a consequence
	// of another, and "cause=kind:detail" (see causeWords).
	Findings []string `json:"findings"`
}

// observed is what a report says, in the shape of pageExpect.
func observed(r *Report) pageExpect {
	var e pageExpect
	for i, l := range []*LaneReport{&r.Lanes.Plain, &r.Lanes.Render.LaneReport} {
		e.Status[i] = l.HTTPStatus
		if u, err := url.Parse(l.FinalURL); err == nil {
			e.Final[i] = u.RequestURI()
		}
		if p := l.Page; p != nil {
			e.Title[i], e.Words[i], e.Links[i] = p.Title, p.WordCount, p.LinkCount
			if len(p.H1) > 0 {
				e.H1[i] = p.H1[0]
			}
		}
	}
	for _, f := range r.Findings {
		e.Findings = append(e.Findings, findingWords(f))
	}
	slices.Sort(e.Findings)
	return e
}

// findingWords writes a finding for an expectation.
func findingWords(f compare.Finding) string {
	s := string(f.Severity) + " " + f.Code
	if f.Lane != "" {
		s += " lane=" + string(f.Lane)
	}
	if f.ConsequenceOf != "" {
		s += " of=" + f.ConsequenceOf
	}
	if c := causeWords(f.Cause); c != "" {
		s += " cause=" + c
	}
	return s
}

// causeWords writes a cause: its kind, then what names it: the element
// and line of a parser cause; the mechanism and target path of a
// redirect, and what moved the page ("by=" the code, "header=" a response
// header); the lane and element of a soft 404; the response path of a
// request and the code that requested it; the code of a script's write.
// Code is the site's own file and line ("src/App.jsx:12" from a source
// map, else the script's path and line), and "lib=" the library whose code
// came first; "in=" the site's own file and line that holds what a
// library rendered (or names a redirect's target).
func causeWords(c *compare.Cause) string {
	if c == nil {
		return ""
	}
	s := string(c.Kind)
	switch c.Kind {
	case compare.CauseParser:
		s += fmt.Sprintf(":%s:%d", c.Element, c.SourceLine)
	case compare.CauseRedirect:
		target := c.Target
		if u, err := url.Parse(c.Target); err == nil {
			target = u.RequestURI()
		}
		s += ":" + c.Mechanism + ":" + target
		if c.Header != "" {
			s += " header=" + c.Header + ":" + c.RequestPath
		}
		if code := causeCode(c); code != "" {
			s += " by=" + code
		}
	case compare.CauseSoft404:
		s += ":" + c.Mechanism + ":" + c.Element
	case compare.CauseRequest:
		s += ":" + c.RequestPath
		if code := causeCode(c); code != "" {
			s += " by=" + code
		}
	case compare.CauseScript:
		if code := causeCode(c); code != "" {
			s += ":" + code
		}
	}
	if c.Defined != nil {
		s += fmt.Sprintf(" in=%s:%d", c.Defined.File, c.Defined.Line)
	}
	if c.Library != "" {
		s += " lib=" + strings.ReplaceAll(c.Library, " ", "_")
	}
	return s
}

// causeCode is the code a cause names: its original file and line, else
// its script's path (or "inline") and line.
func causeCode(c *compare.Cause) string {
	switch {
	case c.Source != nil:
		return fmt.Sprintf("%s:%d", c.Source.File, c.Source.Line)
	case c.Inline:
		return fmt.Sprintf("inline:%d", c.Line)
	case c.ScriptURL != "":
		p := c.ScriptURL
		if u, err := url.Parse(c.ScriptURL); err == nil {
			p = u.Path
		}
		return fmt.Sprintf("%s:%d", p, c.Line)
	}
	return ""
}

// expectDiff says how a report differs from its expectation: each field
// that differs, and the findings missing or not expected; "" when none.
func expectDiff(got, want pageExpect) string {
	var b strings.Builder
	field := func(name string, g, w any) {
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) {
			fmt.Fprintf(&b, "  %s %s, want %s\n", name, gj, wj)
		}
	}
	field("status", got.Status, want.Status)
	field("final", got.Final, want.Final)
	field("title", got.Title, want.Title)
	field("h1", got.H1, want.H1)
	field("words", got.Words, want.Words)
	field("links", got.Links, want.Links)
	for _, f := range want.Findings {
		if !slices.Contains(got.Findings, f) {
			fmt.Fprintf(&b, "  missing:    %s\n", f)
		}
	}
	for _, f := range got.Findings {
		if !slices.Contains(want.Findings, f) {
			fmt.Fprintf(&b, "  unexpected: %s\n", f)
		}
	}
	return b.String()
}

// TestCorpusReports audits every page of the framework corpus (issue 32)
// and checks its report against the expectations written next to each
// app (testdata/corpus/apps/*/expect.json, snippets/expect.json): each
// lane's status, final address, title, main heading, words and links, and
// every finding with its severity, lane and cause. It checks the site's
// request log too: each page fetched once per lane and robots.txt once
// per host by the plain lane, everything else only by the render lane,
// and nothing but GET. go test ./audit -run TestCorpusReports -update
// rewrites the expectations from what the reports say.
func TestCorpusReports(t *testing.T) {
	c := corpus.Shared(t)
	e := mustEnvGuard(t, func(e *env, gc *policy.GuardConfig) {
		c.Register(e.site)
		*gc = e.site.GuardConfig(c.Hosts()...)
	}, nil)
	pages := c.Pages()
	audits := auditAll(t, e, pages)
	if *update {
		writeExpectations(t, pages, audits)
		return
	}
	want := readExpectations(t, pages)
	for i, p := range pages {
		t.Run(p.Host+p.Path, func(t *testing.T) {
			r := audits[i].report
			w, ok := want[p.Expect][p.Key]
			if !ok {
				t.Fatalf("no expectation for %s in %s (run with -update)", p.Key, p.Expect)
			}
			if diff := expectDiff(observed(r), w); diff != "" {
				t.Errorf("%s: the report differs from %s:\n%s", p.URL(), filepath.Base(filepath.Dir(p.Expect))+"/"+corpus.ExpectFile, diff)
			}
		})
	}
	checkCorpusLog(t, e.site, pages, audits)
}

// corpusAudit is one audit of the corpus tests and when it ran.
type corpusAudit struct {
	report     *Report
	start, end time.Time
}

// auditAll audits the pages, two hosts at a time (one audit at a time per
// host, as the limits promise), and fails on an audit that did not complete.
func auditAll(t *testing.T, e *env, pages []corpus.Page) []corpusAudit {
	t.Helper()
	byHost := map[string][]int{}
	var hosts []string
	for i, p := range pages {
		if byHost[p.Host] == nil {
			hosts = append(hosts, p.Host)
		}
		byHost[p.Host] = append(byHost[p.Host], i)
	}
	audits := make([]corpusAudit, len(pages))
	next := make(chan string, len(hosts))
	for _, h := range hosts {
		next <- h
	}
	close(next)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for h := range next {
				for _, i := range byHost[h] {
					start := time.Now()
					r := e.audit(t, pages[i].URL(), TriggerCLI)
					audits[i] = corpusAudit{report: r, start: start, end: time.Now()}
				}
			}
		})
	}
	wg.Wait()
	for i, a := range audits {
		if a.report.Status != StatusComplete {
			t.Fatalf("%s: status %s (%s)", pages[i].URL(), a.report.Status, a.report.Reason)
		}
	}
	return audits
}

// checkCorpusLog checks the test site's log of each corpus audit (the
// requests to its host while it ran): robots.txt and the page once by the
// plain lane (and the hops of a server redirect), the page once by the
// render lane and everything else only by it, nothing but GET.
func checkCorpusLog(t *testing.T, site *testsite.Site, pages []corpus.Page, audits []corpusAudit) {
	t.Helper()
	plainUA, renderUA := policy.DefaultIdentity().PlainUA(), browser.UserAgent()
	hits := site.Hits()
	mapsFetched := 0
	for i, p := range pages {
		a := audits[i]
		var plain []string
		loads, maps := 0, 0
		for _, h := range hits {
			if h.Host != p.Host || h.Start.Before(a.start) || h.End.After(a.end) {
				continue
			}
			switch {
			case h.Method != "GET":
				t.Errorf("%s: %s %s reached the site; only GET may", p.URL(), h.Method, h.Path)
			case h.UserAgent == plainUA:
				plain = append(plain, h.Path)
			case h.UserAgent != renderUA:
				t.Errorf("%s: %s fetched with user agent %q", p.URL(), h.Path, h.UserAgent)
			case h.Path == "/robots.txt":
				t.Errorf("%s: the render lane fetched robots.txt", p.URL())
			case h.Path == p.Path && strings.HasPrefix(h.Accept, "text/html"):
				loads++
			case strings.HasSuffix(h.Path, ".map"):
				maps++
			}
		}
		// Source maps: fetched by the render lane only, counted in the
		// report, at most MaxSourceMaps, never a library's (preact's UMD
		// build publishes one).
		if got := a.report.Lanes.Render.SourceMaps; maps != got || maps > render.MaxSourceMaps {
			t.Errorf("%s: the site served %d source maps, the report counts %d (at most %d)", p.URL(), maps, got, render.MaxSourceMaps)
		}
		mapsFetched += maps
		want := []string{"/robots.txt", p.Path}
		if p.Redirect != "" {
			want = append(want, p.Redirect)
		}
		if !slices.Equal(plain, want) {
			t.Errorf("%s: the plain lane fetched %q, want %q", p.URL(), plain, want)
		}
		if loads != 1 {
			t.Errorf("%s: the render lane loaded the page %d times, want once", p.URL(), loads)
		}
	}
	if mapsFetched == 0 {
		t.Errorf("no audit fetched a source map; the corpus's hashed bundles publish theirs")
	}
	for _, h := range hits {
		if strings.HasSuffix(h.Path, "preact.min.umd.js.map") {
			t.Errorf("%s%s fetched: a library's source map", h.Host, h.Path)
		}
	}
}

// readExpectations reads the expectation files the pages name.
func readExpectations(t *testing.T, pages []corpus.Page) map[string]map[string]pageExpect {
	t.Helper()
	out := map[string]map[string]pageExpect{}
	for _, p := range pages {
		if _, ok := out[p.Expect]; ok {
			continue
		}
		b, err := os.ReadFile(p.Expect)
		if err != nil {
			t.Fatalf("read expectations (run with -update to write them): %v", err)
		}
		m := map[string]pageExpect{}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", p.Expect, err)
		}
		out[p.Expect] = m
	}
	return out
}

// writeExpectations writes what the reports say as the expectations.
func writeExpectations(t *testing.T, pages []corpus.Page, audits []corpusAudit) {
	t.Helper()
	files := map[string]map[string]pageExpect{}
	for i, p := range pages {
		if files[p.Expect] == nil {
			files[p.Expect] = map[string]pageExpect{}
		}
		files[p.Expect][p.Key] = observed(audits[i].report)
	}
	for file, m := range files {
		if err := os.WriteFile(file, expectationsJSON(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// expectationsJSON writes expectations for people to read: one line a
// field, one line a finding.
func expectationsJSON(m map[string]pageExpect) []byte {
	var b strings.Builder
	b.WriteString("{\n")
	keys := slices.Sorted(maps.Keys(m))
	for i, k := range keys {
		e := m[k]
		line := func(name string, v any) {
			j, _ := json.Marshal(v)
			fmt.Fprintf(&b, "    %q: %s,\n", name, strings.ReplaceAll(string(j), ",", ", "))
		}
		fmt.Fprintf(&b, "  %q: {\n", k)
		line("status", e.Status)
		line("final", e.Final)
		line("title", e.Title)
		line("h1", e.H1)
		line("words", e.Words)
		line("links", e.Links)
		b.WriteString("    \"findings\": [")
		for j, f := range e.Findings {
			q, _ := json.Marshal(f)
			sep := ","
			if j == len(e.Findings)-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "\n      %s%s", q, sep)
		}
		if len(e.Findings) > 0 {
			b.WriteString("\n    ")
		}
		b.WriteString("]\n  }")
		if i < len(keys)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return []byte(b.String())
}
