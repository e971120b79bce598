package compare

import (
	"net/url"
	"strings"
)

// normURL brings a URL to the form the extractor resolves to (lower-case
// host, no default port) without its fragment; "" when it is none.
func normURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return ""
	}
	u.Fragment, u.RawFragment = "", ""
	u.Host = strings.ToLower(u.Host)
	switch u.Scheme {
	case "http":
		u.Host = strings.TrimSuffix(u.Host, ":80")
	case "https":
		u.Host = strings.TrimSuffix(u.Host, ":443")
	}
	if u.Host != "" && u.Path == "" && u.Opaque == "" {
		u.Path = "/"
	}
	return u.String()
}

// hrefForm writes an http(s) URL with an empty path the way a browser's
// URL.href does, with "/" (https://e.example and https://e.example/ are
// one URL); other strings are returned as they are.
func hrefForm(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Path != "" || u.Opaque != "" || (u.Scheme != "http" && u.Scheme != "https") {
		return s
	}
	u.Path = "/"
	return u.String()
}

// The kinds of href urlKind tells apart.
const (
	urlInvalid = iota
	urlRelative
	urlAbsolute
)

// urlKind says whether a trimmed href is an absolute http(s) URL, a
// relative reference, or no URL at all: empty, holding spaces or control
// characters ("I am not a URL"), unparsable (a space in the host), or of
// another scheme.
func urlKind(href string) int {
	if href == "" || strings.IndexFunc(href, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return urlInvalid
	}
	u, err := url.Parse(href)
	switch {
	case err != nil:
		return urlInvalid
	case u.Scheme == "":
		return urlRelative
	case !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") || u.Host == "":
		return urlInvalid
	}
	return urlAbsolute
}
