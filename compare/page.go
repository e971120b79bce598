package compare

// Page is what the extractor reads from one lane's document. The same
// extractor runs on both lanes, so two Pages differ only where the documents do.
// The JSON names are part of the report schema lekta.report/v1.
//
// Every string is valid UTF-8 and capped (text 1,024 bytes, URLs 2,048,
// anchor text 256); every list is capped (links 2,000, headings 500, images
// 500, JSON-LD blocks 100, hreflang 500, bot robots metas 50). A field that hit
// its cap is named in Truncated, so a short list is never mistaken for a
// complete one.
type Page struct {
	Title           string `json:"title"`
	MetaDescription string `json:"meta_description"`
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
	// Canonical is the resolved href of the first <link rel="canonical">.
	Canonical string `json:"canonical"`
	// CanonicalConflict is true when the document has several canonical links
	// pointing to different URLs (search engines then ignore them all).
	CanonicalConflict bool `json:"canonical_conflict,omitempty"`
	// CanonicalHeader is the canonical from a Link response header.
	CanonicalHeader string      `json:"canonical_header,omitempty"`
	Hreflang        []Alternate `json:"hreflang"`
	Lang            string      `json:"lang"`
	H1              []string    `json:"h1"`
	Headings        []Heading   `json:"headings"`
	Links           []Link      `json:"links"`
	// LinkCount is the number of http(s) links in the document, including
	// those beyond the cap of Links.
	LinkCount int `json:"link_count"`
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
}

// Alternate is one hreflang alternate.
type Alternate struct {
	Lang string `json:"lang"`
	Href string `json:"href"`
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
	maxBotRobots   = 50
	maxXRobotsTag  = 20
	maxWordKeys    = 200_000
)
