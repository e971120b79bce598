package compare

// Page is what the extractor reads from one lane's document. The same
// extractor runs on both lanes, so two Pages differ only where the documents do.
// The JSON names are part of the report schema lekta.report/v1.
//
// Every string is valid UTF-8 and capped (text 1,024 bytes, URLs 2,048,
// anchor text 256); every list is capped (links 2,000, headings 500, images
// 500, JSON-LD blocks 100, hreflang 500, bot robots metas 50, uncrawlable
// links 100). A field that hit
// its cap is named in Truncated, so a short list is never mistaken for a
// complete one.
type Page struct {
	Title string `json:"title"`
	// OtherTitles are the texts of the <title> elements after the first
	// (the one browsers and search engines use), at most 5.
	OtherTitles []string `json:"other_titles,omitempty"`
	// MetaDescription is the first <meta name="description"> of <head>;
	// those in <body>, which search engines ignore, are only counted in
	// MetaDescriptionInBody.
	MetaDescription       string `json:"meta_description"`
	MetaDescriptionInBody int    `json:"meta_description_in_body,omitempty"`
	// OtherMetaDescriptions are the contents of the meta descriptions of
	// <head> after the first, at most 5.
	OtherMetaDescriptions []string `json:"other_meta_descriptions,omitempty"`
	// MetaRobots is the content of <meta name="robots">, several joined with ", ".
	MetaRobots string `json:"meta_robots"`
	// BotRobots holds bot-specific robots metas (googlebot, gptbot, ...) by lower-case name.
	BotRobots map[string]string `json:"bot_robots,omitempty"`
	// XRobotsTag holds the X-Robots-Tag response header values.
	XRobotsTag []string `json:"x_robots_tag,omitempty"`
	// Noindex is true when meta robots or X-Robots-Tag says noindex (or none)
	// to every robot or to the auditing bot's own token.
	Noindex bool `json:"noindex"`
	// Nofollow is true when meta robots or X-Robots-Tag says nofollow (or none)
	// to every robot or to the auditing bot's own token.
	Nofollow bool `json:"nofollow"`
	// UnavailableAfter is the unavailable_after date of those directives as
	// written; Expired says it lies before the audit (it then counts as noindex).
	UnavailableAfter string `json:"unavailable_after,omitempty"`
	Expired          bool   `json:"expired,omitempty"`
	// Canonical is the resolved href of the first <link rel="canonical">.
	Canonical string `json:"canonical"`
	// CanonicalConflict is true when the document has several canonical links
	// pointing to different URLs (search engines then ignore them all).
	CanonicalConflict bool `json:"canonical_conflict,omitempty"`
	// CanonicalHref is the first head canonical's href as written, set only
	// when it is not an absolute http(s) URL (relative, or no URL at all,
	// in which case Canonical does not use it). Canonical links in <body>
	// are ignored, as search engines ignore them, and only counted in
	// CanonicalInBody.
	CanonicalHref   string `json:"canonical_href,omitempty"`
	CanonicalInBody int    `json:"canonical_in_body,omitempty"`
	// CanonicalHeader is the canonical from a Link response header.
	CanonicalHeader string `json:"canonical_header,omitempty"`
	// CanonicalHeaderHref is the Link header canonical as written, set only
	// when it is not an absolute http(s) URL.
	CanonicalHeaderHref string `json:"canonical_header_href,omitempty"`
	// Hreflang lists the alternates of <head> and the Link header; those in
	// <body> are ignored and counted in HreflangInBody.
	Hreflang       []Alternate `json:"hreflang"`
	HreflangInBody int         `json:"hreflang_in_body,omitempty"`
	Lang           string      `json:"lang"`
	H1             []string    `json:"h1"`
	Headings       []Heading   `json:"headings"`
	Links          []Link      `json:"links"`
	// LinkCount is the number of http(s) links in the document, including
	// those beyond the cap of Links.
	LinkCount int `json:"link_count"`
	// UncrawlableLinks are anchors crawlers cannot follow (javascript:,
	// file: and ftp: hrefs; <a> without href that has an event listener,
	// role=link or an attribute meant for an href; href="#" with an event
	// listener; hash routes such as href="#/guide"), the first 100;
	// UncrawlableCount counts them all.
	UncrawlableLinks []UncrawlableLink `json:"uncrawlable_links,omitempty"`
	UncrawlableCount int               `json:"uncrawlable_count,omitempty"`
	// ImagesMissingAlt lists the resolved src of <img> without an alt attribute.
	ImagesMissingAlt []string  `json:"images_missing_alt"`
	JSONLD           []JSONLD  `json:"json_ld"`
	JSONLDTypes      []string  `json:"json_ld_types"`
	OpenGraph        OpenGraph `json:"open_graph"`
	// WordCount is the number of visible words: body text outside script,
	// style, template and hidden elements; <noscript> counts in the plain lane
	// only, because a browser with scripts on never shows it.
	WordCount int `json:"word_count"`
	// DeepNesting is true when elements nest deeper than an HTML parser
	// accepts (512); the extract then comes from a flattened document.
	DeepNesting bool `json:"deep_nesting,omitempty"`
	// Truncated names the fields (by JSON name) cut at their cap, sorted.
	Truncated []string `json:"truncated,omitempty"`

	// words counts each visible word by the hash of its lower-case form, for
	// the text share. Not reported; nil on a Page decoded from JSON.
	words map[uint64]uint32
	// linkKeys holds the hash of every distinct link href, beyond the cap of
	// Links, for the link share. Not reported; nil on a Page decoded from JSON.
	linkKeys map[uint64]struct{}
	// writes says which script writes the rendered page's fields came
	// from (attribution.go); nil for the plain lane and without marks.
	writes *pageWrites
	// robotsTitleInBody counts the robots metas (bot-specific ones
	// included) and titles in <body>, which have no counter of their own,
	// so that Diff scans the server HTML for the head's end only when a
	// head-only tag stands in the body. Not reported; 0 on a Page decoded
	// from JSON.
	robotsTitleInBody int
	// lead is the start of the main text (of <main> or role=main when the
	// page has one, else of the body), at most maxLead bytes, for the soft
	// 404 check; mainWords counts the words of the main element when the page
	// has one (hasMain). Not reported; empty on a Page decoded from JSON.
	lead      string
	mainWords int
	hasMain   bool
	// refreshDelay is the delay in seconds of the first meta refresh,
	// hasRefresh says there is one. Not reported.
	refreshDelay int
	hasRefresh   bool
	// described says a head meta description was read.
	described bool
}

// Alternate is one hreflang alternate.
type Alternate struct {
	// Lang is the hreflang value as written, surrounding spaces included.
	Lang string `json:"lang"`
	// Href is resolved against the document base.
	Href string `json:"href"`
	// HrefWritten is the href as written when it is not an absolute URL.
	HrefWritten string `json:"href_written,omitempty"`
	// NoHref: the element has no href attribute.
	NoHref bool `json:"no_href,omitempty"`
	// Header: the alternate comes from a Link response header.
	Header bool `json:"header,omitempty"`
}

// UncrawlableLink is an anchor a crawler cannot follow.
type UncrawlableLink struct {
	// Href is the href as written ("" when there is none).
	Href string `json:"href"`
	Text string `json:"text"`
	// Reason is javascript, file, ftp, no_href, script_fragment or
	// hash_route.
	Reason string `json:"reason"`
}

// Heading is one entry of the heading outline.
type Heading struct {
	Level int    `json:"level"`
	Text  string `json:"text"`
}

// Link is one <a href> of the page.
type Link struct {
	// Href is resolved against the document base, without its fragment.
	Href     string `json:"href"`
	Rel      string `json:"rel,omitempty"`
	Text     string `json:"text"`
	Internal bool   `json:"internal"`
	// NonDescriptive: the text says nothing about the target ("click here",
	// "mehr"), judged in the language in force on the elements holding the
	// text (every list when none is known or they disagree); false for
	// nofollow links and links to the page itself, as in Lighthouse.
	NonDescriptive bool `json:"non_descriptive,omitempty"`
}

// JSONLD is one <script type="application/ld+json"> block.
type JSONLD struct {
	// Types are the top-level @type values, those of @graph items and of
	// top-level array items included, in document order.
	Types []string `json:"types"`
	// Error is the parse error, when the block is not valid JSON.
	Error string `json:"error,omitempty"`
}

// OpenGraph holds the basic og: properties.
type OpenGraph struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Image       string `json:"image,omitempty"`
	URL         string `json:"url,omitempty"`
	Type        string `json:"type,omitempty"`
}

// Caps on what a Page keeps. They bound memory and report size on hostile
// pages; Truncated says when one was hit.
const (
	maxText        = 1024
	maxOthers      = 5
	maxURL         = 2048
	maxAnchorText  = 256
	maxLinks       = 2000
	maxLinkKeys    = 100_000
	maxHeadings    = 500
	maxH1          = 100
	maxImages      = 500
	maxJSONLD      = 100
	maxJSONLDTypes = 50
	maxJSONLDBytes = 2 << 20
	maxHreflang    = 500
	maxUncrawlable = 100
	maxBotRobots   = 50
	maxXRobotsTag  = 20
	maxWordKeys    = 200_000
	maxLead        = 512
)
