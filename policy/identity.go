package policy

import "fmt"

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
