package compare

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The page checks where Lighthouse 12.8.2 answered otherwise on the same
// page and Lighthouse is right (issue 22). internal/parity measures the
// agreement per Lighthouse category; these pin the rules one by one.

// TestUnavailableAfterDates: every date form Google documents for
// unavailable_after is read, and a zone written as a name (PST, EST) has
// its offset.
func TestUnavailableAfterDates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, date, now string
		expired         bool
	}{
		{"rfc850_without_weekday", "25-Aug-2007 15:00:00 EST", "Mon, 05 Jan 2026 10:00:00 GMT", true},
		{"rfc850", "Friday, 25-Jun-10 15:00:00 GMT", "Mon, 05 Jan 2026 10:00:00 GMT", true},
		{"rfc822", "25 Jun 2010 15:00:00 PST", "Mon, 05 Jan 2026 10:00:00 GMT", true},
		{"rfc1123_one_digit_day", "Fri, 2 Jul 2010 15:00:00 GMT", "Mon, 05 Jan 2026 10:00:00 GMT", true},
		{"iso8601_offset", "2010-06-25T15:00:00-08:00", "Mon, 05 Jan 2026 10:00:00 GMT", true},
		{"iso8601_space", "2010-06-25 15:00:00", "Mon, 05 Jan 2026 10:00:00 GMT", true},
		{"future", "25 Jun 2045 15:00:00 PST", "Mon, 05 Jan 2026 10:00:00 GMT", false},
		// 15:00 PST is 23:00 GMT: not yet passed at 22:30 GMT.
		{"pst_is_eight_hours_behind", "25 Jun 2010 15:00:00 PST", "Fri, 25 Jun 2010 22:30:00 GMT", false},
		{"pst_passed", "25 Jun 2010 15:00:00 PST", "Fri, 25 Jun 2010 23:30:00 GMT", true},
		{"est_is_five_hours_behind", "25-Aug-2007 15:00:00 EST", "Sat, 25 Aug 2007 19:30:00 GMT", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := snap(LanePlain, doc(`<meta name="robots" content="all, unavailable_after: `+tc.date+`">`, ""))
			s.Header["Date"] = []string{tc.now}
			p := Extract(s)
			if p.Expired != tc.expired || p.Noindex != tc.expired {
				t.Errorf("unavailable_after %q at %s: expired %v noindex %v, want %v", tc.date, tc.now, p.Expired, p.Noindex, tc.expired)
			}
		})
	}
}

// TestUnavailableAfterFetchClock: without a Date header the date is judged
// against the time of the fetch, and Options.Now (the clock an audit
// passes both lanes) wins over both.
func TestUnavailableAfterFetchClock(t *testing.T) {
	t.Parallel()
	body := doc(`<meta name="robots" content="unavailable_after: 2020-01-01">`, "")
	s := snap(LanePlain, body)
	if p := Extract(s); p.Expired || p.UnavailableAfter != "2020-01-01" {
		t.Errorf("no clock at all: expired %v (%q), want recorded, not judged", p.Expired, p.UnavailableAfter)
	}
	s.FetchedAt = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	if p := Extract(s); !p.Expired || !p.Noindex {
		t.Errorf("fetched in 2026: expired %v, want true", p.Expired)
	}
	if p := ExtractWith(s, Options{Now: time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)}); p.Expired {
		t.Error("Options.Now in 2019: expired, want the audit's clock to win")
	}
	// The crawler rows judge by the same clock.
	bot := snap(LanePlain, doc(`<meta name="gptbot" content="unavailable_after: 2020-01-01">`, ""))
	bot.FetchedAt = s.FetchedAt
	for _, row := range SeenByCrawlers(nil, &Observed{Snapshot: bot}, nil) {
		if row.Token == "GPTBot" && (!row.Noindex || row.MayIndex) {
			t.Errorf("GPTBot row %+v: want noindex by its unavailable_after, judged at the fetch", row)
		}
	}
	// One clock for both lanes: a static page gets one finding, no difference.
	plain, render := snap(LanePlain, body), snap(LaneRender, body)
	plain.FetchedAt = s.FetchedAt
	render.Header["Date"] = []string{"Mon, 05 Jan 2026 10:00:03 GMT"}
	render.Render = &RenderDetails{Settled: true}
	res := Diff(&Observed{Snapshot: plain}, &Observed{Snapshot: render})
	for _, f := range res.Findings {
		if f.Code == CodeRobotsNoindexRenderOnly || f.Code == CodeRobotsNoindexPlainOnly || (f.Code == CodeRobotsUnavailableAfter && f.Lane != "") {
			t.Errorf("static page judged differently per lane: %s %s: %s", f.Code, f.Lane, f.Message)
		}
	}
}

// TestCanonicalComparedAsURLs: the canonical of the Link header and of the
// element are one URL when they differ only as strings.
func TestCanonicalComparedAsURLs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ header, element string }{
		{"https://example.com", "https://example.com/"},
		{"https://EXAMPLE.com:443/", "https://example.com"},
		{"http://shop.example/a", "http://shop.example:80/a"},
	} {
		s := snap(LanePlain, doc(`<link rel="canonical" href="`+tc.element+`"><link rel="canonical" href="`+tc.header+`">`, ""))
		s.Header["Link"] = []string{"<" + tc.header + `>; rel="canonical"`}
		p := Extract(s)
		res := Diff(&Observed{Snapshot: s, Page: p}, nil)
		for _, f := range res.Findings {
			if f.Code == CodeCanonicalHeaderMismatch || f.Code == CodeCanonicalConflicting {
				t.Errorf("Link %q, element %q: %s: %s", tc.header, tc.element, f.Code, f.Message)
			}
		}
	}
}

// lighthouseVague are the phrases of Lighthouse's link-text audit, per
// language (core/audits/seo/link-text.js), for the test only.
var lighthouseVague = map[string][]string{
	"en": {"click here", "click this", "go", "here", "information", "learn more", "more", "more info", "more information",
		"right here", "read more", "see more", "start", "this"},
	"ja": {"ここをクリック", "こちらをクリック", "リンク", "続きを読む", "続く", "全文表示"},
	"es": {"click aquí", "click aqui", "clicka aquí", "clicka aqui", "pincha aquí", "pincha aqui", "aquí", "aqui", "más", "mas",
		"más información", "más informacion", "mas información", "mas informacion", "este", "enlace", "este enlace", "empezar"},
	"pt": {"clique aqui", "ir", "mais informação", "mais informações", "mais", "veja mais"},
	"ko": {"여기", "여기를 클릭", "클릭", "링크", "자세히", "자세히 보기", "계속", "이동", "전체 보기"},
	"sv": {"här", "klicka här", "läs mer", "mer", "mer info", "mer information"},
	"de": {"klicke hier", "hier klicken", "hier", "mehr", "siehe", "dies", "das", "weiterlesen"},
	"ta": {"அடுத்த பக்கம்", "மறுபக்கம்", "முந்தைய பக்கம்", "முன்பக்கம்", "மேலும் அறிக", "மேலும் தகவலுக்கு",
		"மேலும் தரவுகளுக்கு", "தயவுசெய்து இங்கே அழுத்தவும்", "இங்கே கிளிக் செய்யவும்"},
	"fa": {"اطلاعات بیشتر", "اطلاعات", "این", "اینجا بزنید", "اینجا کلیک کنید", "اینجا", "برو", "بیشتر بخوانید",
		"بیشتر بدانید", "بیشتر", "شروع"},
}

// TestLinkTextLighthouse: every phrase Lighthouse lists is vague in its
// language; nofollow links and links to the page itself are not judged;
// the language is the one in force on the element holding the text.
func TestLinkTextLighthouse(t *testing.T) {
	t.Parallel()
	for lang, phrases := range lighthouseVague {
		for _, phrase := range phrases {
			if !isNonDescriptive(phrase, lang) || !isNonDescriptive(strings.ToUpper(phrase), lang+"-XX") {
				t.Errorf("%s: %q is not vague", lang, phrase)
			}
		}
	}
	tests := []struct {
		name, body string
		vague      bool
	}{
		{"plain", `<a href="/other">click here</a>`, true},
		{"nofollow", `<a href="/other" rel="noopener nofollow">click here</a>`, false},
		{"same_page", `<a href="/page">click here</a>`, false},
		{"same_page_with_fragment_and_host", `<a href="HTTP://SHOP.example:80/page#top">click here</a>`, false},
		{"same_page_query_differs", `<a href="/page?x=1">click here</a>`, true},
		{"text_language_not_link_language", `<a href="/de" lang="en"><span lang="de">Start</span></a>`, false},
		{"text_language_region", `<a href="/de" lang="de-DE">Start</a>`, false},
		{"english_with_region", `<a href="/en" lang="en-US">Start</a>`, true},
		{"german_phrase", `<a href="/de" lang="de">klicke hier</a>`, true},
		{"mixed_languages_use_every_list", `<a href="/x"><span lang="de-DE">click</span> <span lang="fr">here</span></a>`, true},
		{"ancestor_language", `<div lang="de"><a href="/x"><b>start</b></a></div>`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Extract(snap(LanePlain, doc("", tc.body)))
			if len(p.Links) != 1 {
				t.Fatalf("links %+v, want one", p.Links)
			}
			if p.Links[0].NonDescriptive != tc.vague {
				t.Errorf("%q: non_descriptive = %v, want %v", p.Links[0].Text, p.Links[0].NonDescriptive, tc.vague)
			}
		})
	}
}

// TestCrawlableAnchorsLighthouse: which anchors a crawler cannot follow,
// as Lighthouse's crawlable-anchors audit judges them (and where Lekta is
// stricter, as the table of docs/report.md says).
func TestCrawlableAnchorsLighthouse(t *testing.T) {
	t.Parallel()
	const mark = "data-lekta-listener-0123abcd"
	tests := []struct {
		name, body string
		lane       Lane
		reason     string // "" = crawlable or no link at all
	}{
		{"ftp", `<a href="ftp://myname@host.dom">files</a>`, LanePlain, "ftp"},
		{"only_target", `<a target="_blank">Some link</a>`, LanePlain, "no_href"},
		{"only_rel", `<a rel="nofollow">Some link</a>`, LanePlain, "no_href"},
		{"blank_name_and_rel", `<a name=" " rel="x">Some link</a>`, LanePlain, "no_href"},
		{"placeholder", `<a>Some link</a>`, LanePlain, ""},
		{"placeholder_with_id", `<a id="top" onclick="go()">Some link</a>`, LanePlain, ""},
		{"placeholder_with_name", `<a name="x" onclick="go()">Some link</a>`, LanePlain, ""},
		{"onclick", `<a onclick="window.open('/x')">Some link</a>`, LanePlain, "no_href"},
		{"onmousedown", `<a onmousedown="go()">Some link</a>`, LanePlain, "no_href"},
		{"blank_onclick", `<a onclick=" ">Some link</a>`, LanePlain, ""},
		{"role_button_exempt", `<a role="button" onclick="go()">Menu</a>`, LanePlain, ""},
		{"role_button_javascript_exempt", `<a role="button" href="javascript:void(0)">Menu</a>`, LanePlain, ""},
		{"role_link_without_href", `<a role="link" onclick="go()">Some link</a>`, LanePlain, "no_href"},
		{"mailto", `<a href="mailto:a@example.com" onclick="window.open()">mail</a>`, LanePlain, ""},
		{"javascript_void_spaces", `<a href="javascript : void ( 0 )">Some link</a>`, LanePlain, "javascript"},
		{"file", `<a href="file:///image.png">image</a>`, LanePlain, "file"},
		{"listener_mark_render", `<a class="some-link" ` + mark + `>Some link</a>`, LaneRender, "no_href"},
		{"listener_mark_ignored_in_plain", `<a class="some-link" ` + mark + `>Some link</a>`, LanePlain, ""},
		{"listener_on_parent_only", `<div onclick="go()"><a>Some link</a></div>`, LanePlain, ""},
		{"relative", `<a href="/pass">Some link</a>`, LanePlain, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := snap(tc.lane, doc("", tc.body))
			s.Render = &RenderDetails{ListenerMark: mark}
			if tc.lane == LanePlain {
				// A page cannot forge the mark: only the render lane's counts.
				s.Render = nil
			}
			p := Extract(s)
			got := ""
			if len(p.UncrawlableLinks) > 0 {
				got = p.UncrawlableLinks[0].Reason
			}
			if got != tc.reason || p.UncrawlableCount != len(p.UncrawlableLinks) {
				t.Errorf("reason %q (%d uncrawlable: %+v), want %q", got, p.UncrawlableCount, p.UncrawlableLinks, tc.reason)
			}
		})
	}
}

// TestMetaDescriptionInBody: a description in <body> is reported as such
// and not taken as the page's description.
func TestMetaDescriptionInBody(t *testing.T) {
	t.Parallel()
	s := snap(LanePlain, noDescription(doc("", `<meta name="description" content="Not read by search engines here.">`)))
	p := Extract(s)
	if p.MetaDescription != "" || p.MetaDescriptionInBody != 1 {
		t.Fatalf("description %q, in body %d; want none, 1", p.MetaDescription, p.MetaDescriptionInBody)
	}
	codes := fmt.Sprint(codesOf(Diff(&Observed{Snapshot: s, Page: p}, nil)))
	for _, want := range []string{CodeMetaDescriptionInBody, CodeMetaDescriptionMissing} {
		if !strings.Contains(codes, want) {
			t.Errorf("findings %s lack %s", codes, want)
		}
	}
}
