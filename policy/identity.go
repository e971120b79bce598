package policy

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// Identity is who LektaBot says it is. Token and info URL are
// configuration; the bot never impersonates a browser or another crawler.
type Identity struct {
	// Token is the product token robots.txt groups match ("LektaBot").
	Token string
	// Version is sent after the token ("0.1").
	Version string
	// InfoURL is where operators read what the bot does.
	InfoURL string
}

// DefaultIdentity is LektaBot/0.1 with its public policy page.
func DefaultIdentity() Identity {
	return Identity{Token: "LektaBot", Version: "0.1", InfoURL: "https://lekta.dev/bot"}
}

// PlainUA is the plain lane's User-Agent.
func (id Identity) PlainUA() string {
	return fmt.Sprintf("Mozilla/5.0 (compatible; %s/%s; +%s)", id.Token, id.Version, id.InfoURL)
}

// RenderSuffix is appended to the browser's own User-Agent in the render lane.
func (id Identity) RenderSuffix() string {
	return fmt.Sprintf(" %s/%s (+%s)", id.Token, id.Version, id.InfoURL)
}

// ParseInfoURL checks an info URL for the user agents: an absolute http or
// https URL with a host, and nothing that would end or break the user
// agent's comment (white space, control characters, parentheses).
func ParseInfoURL(s string) (string, error) {
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '(' || r == ')' }) {
		return "", errors.New("an info URL must not contain spaces, control characters or parentheses, which would break the user agent")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", errors.New("want an absolute http:// or https:// URL, such as https://audit.example.com/bot")
	}
	return s, nil
}
