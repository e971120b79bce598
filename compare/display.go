package compare

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Words for people: the terminal report and the report page name fields,
// changes and findings with these, and write every diff value with
// DisplayValue, so neither shows a JSON name, a Go map or a struct dump.

// fieldLabels name the diff rows in words.
var fieldLabels = map[string]string{
	"status":             "HTTP status",
	"final_url":          "Final URL",
	"title":              "Title",
	"meta_description":   "Meta description",
	"meta_robots":        "Robots meta",
	"bot_robots":         "Robots metas for one crawler",
	"x_robots_tag":       "X-Robots-Tag header",
	"noindex":            "Noindex",
	"nofollow":           "Nofollow",
	"canonical":          "Canonical URL",
	"canonical_header":   "Canonical in the Link header",
	"lang":               "Language",
	"hreflang":           "Language versions (hreflang)",
	"h1":                 "Main heading (h1)",
	"headings":           "Headings",
	"links":              "Links (distinct addresses)",
	"json_ld_types":      "Structured data types",
	"images_missing_alt": "Images without alt text",
	"open_graph":         "Open Graph tags",
	"word_count":         "Words of text",
}

// FieldLabel names a diff field in words ("Meta description"); an unknown
// field is its name with spaces, capitalised.
func FieldLabel(field string) string {
	if l, ok := fieldLabels[field]; ok {
		return l
	}
	return capitalise(strings.ReplaceAll(field, "_", " "))
}

// ChangeLabel says a diff row's change in words.
func ChangeLabel(c Change) string {
	switch c {
	case ChangeRenderOnly:
		return "only after JavaScript"
	case ChangePlainOnly:
		return "removed by JavaScript"
	case ChangeChanged:
		return "changed by JavaScript"
	}
	return "same"
}

// codeWords are the words of a code's second part that read badly as written.
var codeWords = map[string]string{
	"render_only":          "only after JavaScript",
	"plain_only":           "removed by JavaScript",
	"changed":              "changed by JavaScript",
	"not_ok":               "not a success",
	"differs":              "differs between the lanes",
	"noindex_render_only":  "noindex only after JavaScript",
	"noindex_plain_only":   "noindex removed by JavaScript",
	"nofollow_render_only": "nofollow only after JavaScript",
	"nofollow_plain_only":  "nofollow removed by JavaScript",
	"bot_meta_changed":     "crawler-specific metas changed by JavaScript",
	"connection_refused":   "connection refused",
	"dns":                  "host name does not resolve",
	"tls":                  "secure connection failed",
	"timeout":              "timed out",
	"network":              "not reachable",
}

// codeSubjects name a code's first part in words where FieldLabel does not.
var codeSubjects = map[string]string{
	"robots": "Robots", "content": "Text", "render": "Rendering", "plain": "Plain fetch",
	"lane": "Lane", "site": "Site", "page": "Page", "extract": "Report", "html": "HTML",
	"images": "Images", "headings": "Subheadings", "json_ld": "Structured data",
	"status": "HTTP status", "final_url": "Final URL", "x_robots_tag": "X-Robots-Tag header",
	"canonical": "Canonical URL", "links": "Links", "hreflang": "hreflang",
}

// CodeSubject names what a finding code is about, capitalised: "Title",
// "Text", "Canonical URL".
func CodeSubject(code string) string {
	subject, _, _ := strings.Cut(code, ".")
	if s, ok := codeSubjects[subject]; ok {
		return s
	}
	return FieldLabel(subject)
}

// codeTitles are the titles of the codes whose second part does not read
// as words after their subject.
var codeTitles = map[string]string{
	CodeHTMLOverGooglebotLimit:    "HTML: larger than the 2 MB Googlebot reads",
	CodeTitleMultiple:             "Title: more than one <title>",
	CodeMetaDescriptionMultiple:   "Meta description: more than one",
	CodeTitleLong:                 "Title: too long for search results",
	CodeMetaDescriptionLength:     "Meta description: too short or too long",
	CodeMetaDescriptionInBody:     "Meta description: outside the head",
	CodeCanonicalHeaderMismatch:   "Canonical URL: the Link header says another",
	CodeCanonicalConflicting:      "Canonical URL: more than one, and they differ",
	CodeCanonicalInvalid:          "Canonical URL: not a valid address",
	CodeCanonicalRelative:         "Canonical URL: a relative address",
	CodeCanonicalInBody:           "Canonical URL: outside the head",
	CodeCanonicalRoot:             "Canonical URL: points to the home page",
	CodeCanonicalAlternate:        "Canonical URL: points to another language's page",
	CodeCanonicalOtherDomain:      "Canonical URL: on another domain",
	CodeRobotsUnavailableAfter:    "Robots: a date after which not to show the page",
	CodeRobotsBotNoindex:          "Robots: noindex for some crawlers",
	CodeRobotsNoindex:             "Robots: the page asks not to be indexed",
	CodeRobotsNofollow:            "Robots: the page asks not to follow its links",
	CodeHreflangInvalid:           "hreflang: not a language code",
	CodeHreflangSpaces:            "hreflang: spaces in the value",
	CodeHreflangRelative:          "hreflang: a relative address",
	CodeHreflangMissingHref:       "hreflang: no address",
	CodeHreflangInBody:            "hreflang: outside the head",
	CodeHreflangNoSelf:            "hreflang: the page does not list itself",
	CodeHreflangNoXDefault:        "hreflang: no x-default",
	CodeJSONLDInvalid:             "Structured data: not valid JSON",
	CodeLinksNonDescriptive:       "Links: texts that say nothing (“click here”)",
	CodeLinksUncrawlable:          "Links: crawlers cannot follow them",
	CodeImagesMissingAlt:          "Images: no alt text",
	CodePlainMissing:              "Plain fetch: no document",
	CodePlainTruncated:            "Plain fetch: cut at the size limit",
	CodePlainNotHTML:              "Plain fetch: not an HTML page",
	CodeRenderMissing:             "Rendering: no document",
	CodeRenderTruncated:           "Rendering: cut at the size limit",
	CodeRenderConsoleErrors:       "Rendering: errors in the console",
	CodeRenderExceptions:          "Rendering: scripts threw errors",
	CodeRenderBlockedMethod:       "Rendering: a request other than GET or HEAD was refused",
	CodeRenderCookiesRefused:      "Rendering: cookies and credentials refused",
	CodeRenderRefusedFeatures:     "Rendering: browser features refused",
	CodeRenderWebSocket:           "Rendering: a WebSocket was refused",
	CodeRenderBlockedRobots:       "Rendering: resources robots.txt disallows",
	CodeRenderFailedRequests:      "Rendering: requests that failed",
	CodeRenderNotSettled:          "Rendering: the page never finished loading",
	CodeRenderBudget:              "Rendering: the request budget ran out",
	CodeRenderNavigated:           "Rendering: the page navigated away",
	CodeRenderRedirectScript:      "Rendering: a redirect only browsers follow",
	CodeRenderRedirectMetaRefresh: "Rendering: a meta refresh redirect",
	CodeRenderHistoryPath:         "Rendering: a script changed the address",
	CodeHTMLTooDeep:               "HTML: nested too deeply to read whole",
	CodeExtractTruncated:          "Report: some values were cut",
	CodeRobotsDisallowed:          "Robots: robots.txt disallows the page",
	CodePageSlow:                  "Page: slow to answer",
	CodeRobotsUnreachable:         "Robots: robots.txt could not be read",
	CodeLaneError:                 "Lane: failed",
	CodeLaneSkipped:               "Lane: did not run",
	CodeLaneBlocked:               "Lane: refused before it left",
	CodeHeadEndedEarly:            "Head: ended early by a tag that belongs in the body",
	CodeSoft404:                   "Soft 404: a not-found page answered 200",
	CodeSoft404RenderOnly:         "Soft 404: not found only after JavaScript",
	CodeSoft404Handled:            "Soft 404: a not-found route the server answers 404",
	CodeTitleMissing:              "Title: none",
	CodeMetaDescriptionMissing:    "Meta description: none",
}

// CodeTitle names a finding code in a few words for a heading
// ("Title: only after JavaScript", "Rendering: a redirect only browsers
// follow").
func CodeTitle(code string) string {
	if t, ok := codeTitles[code]; ok {
		return t
	}
	_, rest, _ := strings.Cut(code, ".")
	s := CodeSubject(code)
	w, ok := codeWords[rest]
	if !ok {
		w = strings.ReplaceAll(rest, "_", " ")
	}
	return s + ": " + w
}

// DisplayValue writes one side of a diff row for people: a list of items
// (list true) or one text, "" meaning none. Fresh Go values and values
// decoded from a report's JSON read the same.
func DisplayValue(v any) (items []string, list bool) {
	switch x := asJSON(v).(type) {
	case nil:
		return nil, false
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, displayScalar(e))
		}
		return out, true
	case map[string]any:
		out := make([]string, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if s := displayScalar(x[k]); s != "" {
				out = append(out, k+": "+s)
			}
		}
		return out, true
	default:
		s := displayScalar(x)
		if s == "" {
			return nil, false
		}
		return []string{s}, false
	}
}

// asJSON returns v as encoding/json decodes it into an interface.
func asJSON(v any) any {
	switch v.(type) {
	case nil, string, bool, float64, []any, map[string]any:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return string(b)
	}
	return out
}

// displayScalar writes one value on one line.
func displayScalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case map[string]any:
		return displayObject(x)
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, displayScalar(e))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// displayObject writes the known shapes of list items (an hreflang
// alternate, a heading, a link) in words, and other objects as "k: v".
func displayObject(x map[string]any) string {
	if lang, ok := x["lang"].(string); ok {
		return lang + " → " + displayScalar(x["href"])
	}
	if lvl, ok := x["level"].(float64); ok {
		return fmt.Sprintf("h%d %s", int(lvl), displayScalar(x["text"]))
	}
	if href, ok := x["href"].(string); ok {
		if t, _ := x["text"].(string); t != "" {
			return href + " “" + t + "”"
		}
		return href
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(x)) {
		if s := displayScalar(x[k]); s != "" {
			parts = append(parts, k+": "+s)
		}
	}
	return strings.Join(parts, ", ")
}

// Explain returns what a finding's code explanation adds to its message:
// the sentences of the explanation that the message does not already say
// in nearly the same words, so a reader never reads one thing twice.
func Explain(f Finding) string {
	info, ok := LookupCode(f.Code)
	if !ok || f.ConsequenceOf != "" {
		// A consequence's own message says why it exists; its code's
		// explanation is about scripts writing the page, which it is not.
		return ""
	}
	said := Sentences(f.Message)
	var keep []string
	for _, s := range Sentences(info.Explanation) {
		copied := false
		for _, m := range said {
			if NearCopy(s, m) {
				copied = true
				break
			}
		}
		if !copied {
			keep = append(keep, s)
		}
	}
	return strings.Join(keep, " ")
}

// Sentences splits text at full stops followed by a space, outside quotes
// and brackets.
func Sentences(text string) []string {
	var out []string
	for text != "" {
		s := FirstSentence(text)
		out = append(out, strings.TrimSpace(s))
		text = strings.TrimSpace(text[len(s):])
	}
	return out
}

// NearCopy reports whether two sentences say nearly the same thing: most
// of the content words of the shorter one are in the other.
func NearCopy(a, b string) bool {
	wa, wb := contentWords(a), contentWords(b)
	if len(wa) > len(wb) {
		wa, wb = wb, wa
	}
	if len(wa) == 0 {
		return false
	}
	shared := 0
	for w := range wa {
		if _, ok := wb[w]; ok {
			shared++
		}
	}
	return float64(shared) >= nearCopyShare*float64(len(wa))
}

// nearCopyShare is the share of the shorter sentence's content words that
// makes it a near-copy of the other.
const nearCopyShare = 0.6

// contentWords are the lower-case words of s longer than three letters,
// the small words of English aside, with a plural s dropped.
func contentWords(s string) map[string]struct{} {
	out := map[string]struct{}{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) <= 3 || stopWords[w] {
			continue
		}
		out[strings.TrimSuffix(w, "s")] = struct{}{}
	}
	return out
}

var stopWords = map[string]bool{
	"that": true, "this": true, "with": true, "from": true, "they": true, "them": true, "then": true,
	"their": true, "there": true, "when": true, "only": true, "does": true, "have": true, "which": true,
	"into": true, "than": true, "also": true, "every": true, "other": true, "some": true, "more": true,
}

// capitalise upper-cases the first letter of s.
func capitalise(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}
