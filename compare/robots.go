package compare

import (
	"strings"
	"time"
)

// DefaultBotToken is the product token whose bot-specific robots rules
// Extract applies besides the generic ones.
const DefaultBotToken = "LektaBot"

// knownBots are meta names, besides any name ending in "bot", that address
// one crawler (<meta name="gptbot" content="noindex">).
var knownBots = map[string]bool{
	"google-extended": true, "googlebot-news": true, "googlebot-image": true,
	"chatgpt-user": true, "claude-web": true, "claude-user": true, "anthropic-ai": true,
	"perplexity-user": true, "applebot-extended": true, "bytespider": true,
	"yandex": true, "baiduspider": true, "slurp": true, "cohere-ai": true,
	"meta-externalagent": true, "ccbot": true, "oai-searchbot": true,
	"claude-searchbot": true, "amazonbot": true, "archive.org_bot": true,
}

// isBotMetaName reports whether a lower-case meta name addresses one crawler.
func isBotMetaName(name string) bool {
	if name == "robots" || name == "" {
		return false
	}
	return knownBots[name] || strings.HasSuffix(name, "bot")
}

// directives says what a list of robots directives asks for.
type directives struct {
	noindex, nofollow bool
	// unavailableAfter is the value of an unavailable_after directive as
	// written, "" when there is none.
	unavailableAfter string
	// expired: unavailableAfter is a date before the clock the directives
	// were read with, so the directive counts as noindex.
	expired bool
}

// or merges two directive lists.
func (d directives) or(e directives) directives {
	d.noindex = d.noindex || e.noindex
	d.nofollow = d.nofollow || e.nofollow
	if e.unavailableAfter != "" && (d.unavailableAfter == "" || e.expired && !d.expired) {
		d.unavailableAfter, d.expired = e.unavailableAfter, e.expired
	}
	return d
}

// parseDirectives reads a robots meta content or an X-Robots-Tag directive
// list. Directives are separated by commas; whitespace-separated lists
// ("noindex nofollow") are accepted too, as crawlers do. "none" means
// noindex and nofollow; an unavailable_after date before now (zero: never)
// counts as noindex.
func parseDirectives(s string, now time.Time) directives {
	var d directives
	for _, part := range directiveParts(s) {
		d = d.or(parseDirectivePart(part, now))
	}
	return d
}

// parseDirectivePart reads one comma-separated part.
func parseDirectivePart(part string, now time.Time) directives {
	var d directives
	if name, value, ok := strings.Cut(part, ":"); ok && strings.EqualFold(strings.TrimSpace(name), "unavailable_after") {
		d.unavailableAfter = strings.TrimSpace(value)
		if t, ok := parseRobotsDate(d.unavailableAfter); ok && !now.IsZero() && t.Before(now) {
			d.expired, d.noindex = true, true
		}
		return d
	}
	for _, f := range strings.FieldsFunc(part, func(r rune) bool {
		return r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f'
	}) {
		switch strings.ToLower(f) {
		case "noindex":
			d.noindex = true
		case "nofollow":
			d.nofollow = true
		case "none":
			d.noindex, d.nofollow = true, true
		}
	}
	return d
}

// directiveParts splits a directive list at commas, keeping the comma of
// an unavailable_after date in RFC 850 form ("Friday, 25-Jun-10 ...").
func directiveParts(s string) []string {
	parts := strings.Split(s, ",")
	out := parts[:0]
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		if name, value, ok := strings.Cut(p, ":"); ok && i+1 < len(parts) &&
			strings.EqualFold(strings.TrimSpace(name), "unavailable_after") {
			if _, ok := parseRobotsDate(strings.TrimSpace(value)); !ok {
				if _, ok := parseRobotsDate(strings.TrimSpace(value + "," + parts[i+1])); ok {
					p += "," + parts[i+1]
					i++
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// robotsDateLayouts are the date forms Google documents for
// unavailable_after (RFC 822 and RFC 1123, RFC 850 such as
// "25-Aug-2007 15:00:00 EST", ISO 8601) and their usual variants.
var robotsDateLayouts = []string{
	time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02 15:04:05",
	"2006-01-02 15:04", "2006-01-02",
	time.RFC1123, time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 MST", "Mon, 2 Jan 2006 15:04:05 -0700",
	time.RFC850, time.RFC822, time.RFC822Z, time.ANSIC,
	"2 Jan 2006 15:04:05 MST", "2 Jan 2006 15:04:05 -0700", "2 Jan 2006 15:04 MST", "2 Jan 2006",
	"2-Jan-2006 15:04:05 MST", "2-Jan-2006 15:04:05 -0700", "2-Jan-06 15:04:05 MST", "2-Jan-2006",
	"Monday, 2-Jan-06 15:04:05 MST", "Monday, 02-Jan-2006 15:04:05 MST", "Monday, 2-Jan-2006 15:04:05 MST",
	"January 2, 2006", "January 2, 2006 15:04:05 MST",
}

// zoneOffsets are the zone names RFC 822 defines besides numeric offsets
// (the US zones and GMT), which Go's parser does not know the offset of.
var zoneOffsets = map[string]int{
	"UT": 0, "GMT": 0, "Z": 0,
	"EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
}

// parseRobotsDate reads an unavailable_after date. A zone written as a
// name RFC 822 defines (PST, EST, ...) gets that zone's offset.
func parseRobotsDate(s string) (time.Time, bool) {
	s = strings.Join(strings.Fields(s), " ")
	for _, layout := range robotsDateLayouts {
		t, err := time.ParseInLocation(layout, s, time.UTC)
		if err != nil {
			continue
		}
		if name, off := t.Zone(); off == 0 {
			if h, ok := zoneOffsets[name]; ok && h != 0 {
				t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(),
					time.FixedZone(name, h*3600))
			}
		}
		return t, true
	}
	return time.Time{}, false
}

// directivesWithColon are robots directives whose own syntax contains a
// colon, so "max-snippet: 20" is not mistaken for a user-agent prefix.
var directivesWithColon = map[string]bool{
	"unavailable_after": true, "max-snippet": true, "max-image-preview": true,
	"max-video-preview": true,
}

// xRobotsRule is one directive list of an X-Robots-Tag header, with the
// user agent it is scoped to ("" for all robots), lower-case.
type xRobotsRule struct {
	agent string
	d     directives
	// text is the part as written, for reports.
	text string
}

// parseXRobotsTag reads one X-Robots-Tag header value. A value may start with
// a user-agent token and a colon ("googlebot: noindex, nofollow"); the scope
// then holds for the rest of the value, until another token with a colon.
func parseXRobotsTag(v string, now time.Time) []xRobotsRule {
	var rules []xRobotsRule
	agent := ""
	for _, part := range directiveParts(v) {
		part = strings.TrimSpace(part)
		if name, rest, ok := strings.Cut(part, ":"); ok {
			name = strings.ToLower(strings.TrimSpace(name))
			if !directivesWithColon[name] && isToken(name) {
				agent, part = name, strings.TrimSpace(rest)
			}
		}
		rules = append(rules, xRobotsRule{agent: agent, d: parseDirectivePart(part, now), text: part})
	}
	return rules
}

// isToken reports whether s looks like a user-agent product token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
