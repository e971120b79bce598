package compare

import "strings"

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
	"meta-externalagent": true, "ccbot": true,
}

// isBotMetaName reports whether a lower-case meta name addresses one crawler.
func isBotMetaName(name string) bool {
	if name == "robots" || name == "" {
		return false
	}
	return knownBots[name] || strings.HasSuffix(name, "bot")
}

// directives says what a list of robots directives asks for.
type directives struct{ noindex, nofollow bool }

// parseDirectives reads a robots meta content or an X-Robots-Tag directive
// list. Directives are separated by commas; whitespace-separated lists
// ("noindex nofollow") are accepted too, as crawlers do.
func parseDirectives(s string) directives {
	var d directives
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f'
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
}

// parseXRobotsTag reads one X-Robots-Tag header value. A value may start with
// a user-agent token and a colon ("googlebot: noindex, nofollow"); the scope
// then holds for the rest of the value, until another token with a colon.
func parseXRobotsTag(v string) []xRobotsRule {
	var rules []xRobotsRule
	agent := ""
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if name, rest, ok := strings.Cut(part, ":"); ok {
			name = strings.ToLower(strings.TrimSpace(name))
			if !directivesWithColon[name] && isToken(name) {
				agent, part = name, rest
			}
		}
		rules = append(rules, xRobotsRule{agent: agent, d: parseDirectives(part)})
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
