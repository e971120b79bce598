package server

import (
	"errors"
	"net/url"
	"strings"

	"lekta.dev/lekta/records"
)

// The addresses this instance gives out for use elsewhere (webhook events'
// report_url, badge addresses, the links of /bot) are paths unless
// Config.PublicURL says where the instance is reached: then they are
// absolute, so that they work in a receiver's system or another site's page.

// ParsePublicURL checks a public URL (--public-url): an absolute http or
// https URL with a host, without credentials, query or fragment. It
// returns it without a trailing slash, ready to have paths appended.
func ParsePublicURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return "", errors.New("want the absolute http:// or https:// address this instance is reached at, such as https://audit.example.com")
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(s, " \t\r\n") {
		return "", errors.New("the address must have no credentials, query, fragment or spaces")
	}
	return strings.TrimRight(s, "/"), nil
}

// PublicLink is path (starting with "/") on the instance at publicURL: the
// absolute address when publicURL is set, path itself when it is "".
func PublicLink(publicURL, path string) string {
	return publicURL + path
}

// link is path as this server gives it out.
func (s *Server) link(path string) string { return PublicLink(s.cfg.PublicURL, path) }

// badgeURL is the address of a site's badge, for embedding it elsewhere.
func (s *Server) badgeURL(site records.Site) string {
	return s.link("/badge/" + site.BadgeToken + ".svg")
}
