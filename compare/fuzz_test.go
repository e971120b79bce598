package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzExtract checks that any body, in either lane, gives a Page with only
// valid UTF-8 that encodes as JSON, and that diffing it never fails.
func FuzzExtract(f *testing.F) {
	for _, name := range sitePages(f) {
		body, err := os.ReadFile(filepath.Join(siteDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, false)
	}
	for _, seed := range []string{
		"",
		"<title>\xff\xfe</title><a href='\xc3'>\xe2\x82</a>",
		"<div><div><div><a href=/x><h1>deep</h1></a>",
		`<script type="application/ld+json">{"@graph":[{"@type":["A",1,null]}]}</script>`,
		`<template shadowrootmode=open><h2>x</h2></template><noscript><p>y</p></noscript>`,
		`<base href="javascript:alert(1)"><a href="//[::1]:80/x">v6</a><link rel=canonical href="http://%zz">`,
		`<meta name="robots" content="none"><meta name="gptbot" content="noindex">`,
	} {
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, render bool) {
		s := snap(LanePlain, "")
		if render {
			s.Lane = LaneRender
		}
		s.Body = body
		s.Header = Header{"X-Robots-Tag": {string(body[:min(len(body), 40)])}, "Link": {string(body[:min(len(body), 60)])}}
		p := Extract(s)
		assertValidUTF8(t, p)
		if _, err := json.Marshal(p); err != nil {
			t.Fatalf("marshal page: %v", err)
		}
		res := Diff(&Observed{Snapshot: s, Page: p}, &Observed{Snapshot: s, Page: Extract(s)})
		for _, f := range res.Findings {
			if _, ok := LookupCode(f.Code); !ok {
				t.Fatalf("unknown finding code %s", f.Code)
			}
		}
		assertValidUTF8(t, res)
		if res.Verdict.TextShare != 1 || res.Verdict.LinkShare != 1 {
			t.Fatalf("a page diffed with itself has shares %v and %v, want 1", res.Verdict.TextShare, res.Verdict.LinkShare)
		}
	})
}
