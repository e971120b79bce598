package compare

import (
	"strings"
	"testing"
)

// headDoc is a document whose head has, on line 6, what breaker holds,
// and after it a canonical, two hreflang links and a robots meta (lines
// 7 to 10). body is added to the body (line 13).
func headDoc(breaker, body string) string {
	return strings.Join([]string{
		`<!doctype html>`,
		`<html lang="en">`,
		`<head>`,
		`<title>Kettle</title>`,
		`<meta name="description" content="A blue stoneware kettle, made by hand.">`,
		breaker,
		`<link rel="canonical" href="http://shop.example/page">`,
		`<link rel="alternate" hreflang="de" href="http://shop.example/de/page">`,
		`<link rel="alternate" hreflang="en" href="http://shop.example/page">`,
		`<meta name="robots" content="max-snippet:50">`,
		`</head>`,
		`<body>`,
		`<h1>Kettle</h1><p>A blue kettle.</p>` + body,
		`</body>`,
		`</html>`,
	}, "\n")
}

// movedTail is the end of every head.ended_early message of headDoc.
const movedTail = "; the canonical, 2 hreflang links and the robots meta after it are in the body, where search engines ignore them."

// TestHeadEndedEarly: the finding names the token that ended the head and
// its line in the server HTML, lists the tags it moved, and the in_body
// findings carry the same cause.
func TestHeadEndedEarly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		plain, render string
		// element and line are the cause; "" for no head.ended_early.
		element string
		line    int
		lane    Lane
		// message starts the head.ended_early message, before movedTail.
		message string
	}{
		{name: "img", plain: headDoc(`<img src="/pixel.gif" alt="">`, ""),
			element: "img", line: 6,
			message: "An <img> on line 6 of the server HTML ends the head early"},
		{name: "iframe", plain: headDoc(`<iframe src="https://ads.example/frame"></iframe>`, ""),
			element: "iframe", line: 6,
			message: "An <iframe> on line 6 of the server HTML ends the head early"},
		{name: "div", plain: headDoc(`<div id="consent"></div>`, ""),
			element: "div", line: 6,
			message: "A <div> on line 6 of the server HTML ends the head early"},
		{name: "stray text after a newline", plain: headDoc(`Kettles &amp; more`, ""),
			element: "text", line: 6,
			message: "Stray text on line 6 of the server HTML ends the head early"},
		{name: "tracking pixel in noscript, plain lane only",
			plain:   headDoc(`<noscript><img src="https://tracker.example/p.gif"></noscript>`, ""),
			element: "img", line: 6, lane: LanePlain,
			message: "An <img> inside <noscript> on line 6 of the server HTML ends the head early for crawlers that do not run scripts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			render := tc.render
			if render == "" {
				render = tc.plain
			}
			res := runDiffCase(pair(tc.plain, render, nil))
			want := Cause{Kind: CauseParser, Element: tc.element, SourceLine: tc.line}
			f, ok := findingOf(res, "head.ended_early")
			if !ok {
				t.Fatalf("no head.ended_early finding; got %s", codesOf(res))
			}
			eq(t, "lane", f.Lane, tc.lane)
			eq(t, "severity", f.Severity, SeverityWarning)
			if f.Cause == nil || *f.Cause != want {
				t.Errorf("cause %+v, want %+v", f.Cause, want)
			}
			if !strings.HasPrefix(f.Message, tc.message+movedTail) {
				t.Errorf("message %q, want it to start %q", f.Message, tc.message+movedTail)
			}
			for _, code := range []string{CodeCanonicalInBody, CodeHreflangInBody} {
				g, ok := findingOf(res, code)
				if !ok {
					t.Errorf("no %s finding; got %s", code, codesOf(res))
					continue
				}
				if g.Cause == nil || *g.Cause != want {
					t.Errorf("%s: cause %+v, want %+v", code, g.Cause, want)
				}
				if !strings.Contains(g.Message, "ends the head early") {
					t.Errorf("%s: message %q does not name the cause", code, g.Message)
				}
			}
		})
	}
}

// TestHeadTagWrittenInBody: a tag written inside <body> is reported with
// its own line; the head did not end early, and a clean head, or a tag
// only scripts move, has no parser cause.
func TestHeadTagWrittenInBody(t *testing.T) {
	t.Parallel()
	inBody := headDoc("", "\n"+`<link rel="canonical" href="http://shop.example/other">`)
	inBody = strings.Replace(inBody, `<link rel="canonical" href="http://shop.example/page">`, "", 1)
	clean := headDoc("", "")
	tests := []struct {
		name          string
		plain, render string
		code          string
		lane          Lane
		// cause is the in_body finding's cause, nil for none.
		cause   *Cause
		message string
	}{
		{name: "canonical written in the body", plain: inBody, render: inBody, code: CodeCanonicalInBody,
			cause:   &Cause{Kind: CauseParser, Element: "link", SourceLine: 14},
			message: "It is written inside <body>, on line 14 of the server HTML."},
		{name: "description written after the body tag, plain lane only",
			plain:  strings.Replace(clean, "<body>", `<body><meta name="description" content="Late.">`, 1),
			render: clean, code: CodeMetaDescriptionInBody, lane: LanePlain,
			cause:   &Cause{Kind: CauseParser, Element: "meta", SourceLine: 12},
			message: "It is written inside <body>, on line 12 of the server HTML."},
		{name: "clean head", plain: clean, render: clean},
		{name: "moved by the render lane only", plain: clean, render: headDoc(`<img src="/pixel.gif" alt="">`, ""),
			code: CodeCanonicalInBody, lane: LaneRender},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := runDiffCase(pair(tc.plain, tc.render, nil))
			if f, ok := findingOf(res, "head.ended_early"); ok {
				t.Errorf("unexpected head.ended_early: %s", f.Message)
			}
			for _, f := range res.Findings {
				if f.Cause != nil && f.Code != tc.code {
					t.Errorf("%s has cause %+v", f.Code, f.Cause)
				}
			}
			if tc.code == "" {
				return
			}
			f, ok := findingOf(res, tc.code)
			if !ok {
				t.Fatalf("no %s finding; got %s", tc.code, codesOf(res))
			}
			eq(t, "lane", f.Lane, tc.lane)
			switch {
			case tc.cause == nil && f.Cause != nil:
				t.Errorf("cause %+v, want none", f.Cause)
			case tc.cause != nil && (f.Cause == nil || *f.Cause != *tc.cause):
				t.Errorf("cause %+v, want %+v", f.Cause, tc.cause)
			}
			if tc.message != "" && !strings.Contains(f.Message, tc.message) {
				t.Errorf("message %q, want it to contain %q", f.Message, tc.message)
			}
		})
	}
}

// findingOf returns the first finding with code.
func findingOf(res Result, code string) (Finding, bool) {
	for _, f := range res.Findings {
		if f.Code == code {
			return f, true
		}
	}
	return Finding{}, false
}
