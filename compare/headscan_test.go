package compare

import (
	"fmt"
	"testing"
)

// TestScanHead pins the head scan's rules on the cases the parser treats
// specially: line breaks of every kind, raw text, <template>, <noscript>
// and tags between </head> and <body>.
func TestScanHead(t *testing.T) {
	t.Parallel()
	canonical := `<link rel="canonical" href="http://shop.example/page">`
	tests := []struct {
		name    string
		doc     string
		element string
		line    int
		// moved and written count the head-only tags of each place.
		moved, written int
	}{
		{name: "CR LF and lone CR line breaks", doc: "<html>\r\n<head>\r<title>K</title>\r\n\r\n<img src=x>" + canonical,
			element: "img", line: 5, moved: 1},
		{name: "markup inside a title is text", doc: "<head><title><img> & <div></title>" + canonical + "</head><body></body>"},
		{name: "a template's content is not the page's", doc: "<head><template><div>x</div></template>" + canonical + "</head>"},
		{name: "a noscript with a link stays in the head", doc: `<head><noscript><link rel="stylesheet" href="/a.css"></noscript>` + canonical + "</head>"},
		{name: "text inside a noscript ends the head", doc: "<head>\n<noscript>Enable JavaScript</noscript>\n" + canonical,
			element: "text", line: 2, moved: 1},
		{name: "between </head> and <body> is back in the head", doc: "<head></head>\n" + canonical + "\n<body></body>"},
		{name: "after </head> a div opens the body", doc: "<head></head>\n<div></div>\n" + canonical, written: 1},
		{name: "no head written, text first", doc: "Hello\n" + canonical, element: "text", line: 1, moved: 1},
		{name: "an explicit body after the early end", doc: "<head><img src=x>\n" + canonical + "</head>\n<body>\n" + canonical,
			element: "img", line: 1, moved: 1, written: 1},
		{name: "an svg title is not the page's", doc: "<head></head><body><svg><title>Map</title></svg>"},
		{name: "a made-up element", doc: "<head><x-consent-banner></x-consent-banner>" + canonical, element: "x-consent-banner", line: 1, moved: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := scanHead([]byte(tc.doc))
			eq(t, "element", h.element, tc.element)
			eq(t, "line", h.line, tc.line)
			eq(t, "moved", h.moved.total(), tc.moved)
			eq(t, "written", h.written.total(), tc.written)
		})
	}
}

// TestScanHeadAgreesWithParser: on every test site page and check case,
// the scan finds in the body as many canonicals, hreflang links and
// descriptions as the extractor, which reads x/net/html's parse tree.
func TestScanHeadAgreesWithParser(t *testing.T) {
	t.Parallel()
	docs := map[string][]byte{}
	for _, name := range sitePages(t) {
		docs[name] = mustSitePage(t, name).Body
	}
	for _, tc := range checkCases {
		docs[tc.name] = []byte(tc.badDoc())
	}
	canonical := `<link rel="canonical" href="http://shop.example/page">`
	for i, d := range []string{
		"<head></head>\n" + canonical + "\n<body></body>",
		"<head></head>\n<div></div>\n" + canonical,
		"<head><template><div>x</div></template>" + canonical + "</head>",
		"<head><noscript>Enable JavaScript</noscript>" + canonical,
		"<head><title><img></title>" + canonical + "</head><body><svg><title>Map</title></svg>" + canonical,
	} {
		docs[fmt.Sprint("inline ", i)] = []byte(d)
	}
	for _, b := range []string{`<img src="/p.gif" alt="">`, `<iframe></iframe>`, `<div></div>`, `Kettles`, `<noscript><img src="/p.gif"></noscript>`} {
		docs[b] = []byte(headDoc(b, "\n"+`<meta name="description" content="Late.">`))
	}
	for name, body := range docs {
		p := Extract(&Snapshot{Lane: LanePlain, ContentType: "text/html", Body: body})
		h := scanHead(body)
		in := func(k headTag) int { return h.moved.n[k] + h.written.n[k] }
		if in(headCanonical) != p.CanonicalInBody || in(headHreflang) != p.HreflangInBody || in(headDescription) != p.MetaDescriptionInBody {
			t.Errorf("%s: scan finds canonical %d, hreflang %d, description %d in the body; the extract %d, %d, %d",
				name, in(headCanonical), in(headHreflang), in(headDescription), p.CanonicalInBody, p.HreflangInBody, p.MetaDescriptionInBody)
		}
	}
}
