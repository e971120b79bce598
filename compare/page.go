package compare

// Page is what the extractor reads from one lane's document. The same
// extractor runs on both lanes, so two Pages differ only where the documents do.
// The JSON names are part of the report schema lekta.report/v1.
type Page struct {
	Title           string `json:"title"`
	MetaDescription string `json:"meta_description"`
	// MetaRobots is the content of <meta name="robots">, several joined with ", ".
	MetaRobots string `json:"meta_robots"`
	// BotRobots holds bot-specific robots metas (googlebot, gptbot, ...) by lower-case name.
	BotRobots map[string]string `json:"bot_robots,omitempty"`
	// XRobotsTag holds the X-Robots-Tag response header values.
	XRobotsTag []string `json:"x_robots_tag,omitempty"`
	// Noindex is true when meta robots or X-Robots-Tag says noindex (or none).
	Noindex bool `json:"noindex"`
	// Nofollow is true when meta robots or X-Robots-Tag says nofollow (or none).
	Nofollow bool `json:"nofollow"`
	// Canonical is the resolved href of <link rel="canonical">.
	Canonical string `json:"canonical"`
	// CanonicalHeader is the canonical from a Link response header.
	CanonicalHeader string      `json:"canonical_header,omitempty"`
	Hreflang        []Alternate `json:"hreflang"`
	Lang            string      `json:"lang"`
	H1              []string    `json:"h1"`
	Headings        []Heading   `json:"headings"`
	Links           []Link      `json:"links"`
	// ImagesMissingAlt lists the resolved src of <img> without an alt attribute.
	ImagesMissingAlt []string  `json:"images_missing_alt"`
	JSONLD           []JSONLD  `json:"json_ld"`
	JSONLDTypes      []string  `json:"json_ld_types"`
	OpenGraph        OpenGraph `json:"open_graph"`
	WordCount        int       `json:"word_count"`

	// words counts each lower-cased visible word, for the text share. Not reported.
	words map[string]int
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
	// Href is resolved against the document base.
	Href     string `json:"href"`
	Rel      string `json:"rel,omitempty"`
	Text     string `json:"text"`
	Internal bool   `json:"internal"`
}

// JSONLD is one <script type="application/ld+json"> block.
type JSONLD struct {
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
