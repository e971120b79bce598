package compare

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Why an anchor cannot be followed (UncrawlableLink.Reason).
const (
	reasonJavaScript     = "javascript"
	reasonFile           = "file"
	reasonFTP            = "ftp"
	reasonNoHref         = "no_href"
	reasonScriptFragment = "script_fragment"
	reasonHashRoute      = "hash_route"
)

// hrefAttributes are the attributes the HTML standard allows on <a> only
// together with href: an anchor that has one of them but no href was meant
// as a link (Lighthouse's crawlable-anchors audit reads them so too).
var hrefAttributes = []string{"target", "download", "ping", "rel", "hreflang", "type", "referrerpolicy"}

// isAnchor reports whether n is a link element whose text the walk
// collects: an HTML <a> with an href, with an event listener, with
// role=link or with an attribute that belongs with an href; or an SVG <a>
// with an href.
func (x *extractor) isAnchor(n *html.Node) bool {
	if n.DataAtom != atom.A {
		return false
	}
	switch n.Namespace {
	case "":
		return hasAttr(n, "href") || strings.EqualFold(strings.TrimSpace(attr(n, "role")), "link") ||
			x.hasListener(n) || hasHrefAttribute(n)
	case "svg":
		_, ok := anchorHref(n)
		return ok
	}
	return false
}

// anchorHref returns an anchor's href (xlink:href for SVG links without one).
func anchorHref(n *html.Node) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == "href" && (a.Namespace == "" || a.Namespace == "xlink") {
			return a.Val, true
		}
	}
	return "", false
}

// hasListener reports whether an element has an event listener: an event
// handler attribute (onclick, onmousedown, ...) with a body, or, in the
// render lane, the mark the lane set on elements Chromium lists listeners
// for (listeners added with addEventListener leave no attribute).
func (x *extractor) hasListener(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && len(a.Key) > 2 && strings.HasPrefix(a.Key, "on") && strings.TrimSpace(a.Val) != "" {
			return true
		}
		if x.listenerMark != "" && a.Namespace == "" && a.Key == x.listenerMark {
			return true
		}
	}
	return false
}

// hasHrefAttribute reports whether n has one of hrefAttributes.
func hasHrefAttribute(n *html.Node) bool {
	for _, k := range hrefAttributes {
		if hasAttr(n, k) {
			return true
		}
	}
	return false
}

// uncrawlable says why a crawler cannot follow an anchor, or "" when it can
// or when it is no link at all. As in Lighthouse's crawlable-anchors audit:
// a role other than link says the element is no link (role=button); a
// mailto: link is not for crawlers; an <a> without href is a placeholder
// unless it has an event listener or an attribute that belongs with an
// href, and one with an id or a name is a target within the page. Lekta is
// stricter in four ways: every javascript: href (not only void(0)), an
// ftp: href (no web crawler follows it), an in-page href ("#", "") with a
// listener and a hash route (isHashRoute, listener or not) are
// uncrawlable, and so is role=link without href.
func (x *extractor) uncrawlable(n *html.Node, href string, hasHref bool) string {
	role := strings.TrimSpace(attr(n, "role"))
	linkRole := strings.EqualFold(role, "link")
	compact := strings.Join(strings.Fields(href), "")
	switch {
	case n.Namespace != "" && !hasHref, role != "" && !linkRole, hasPrefixFold(compact, "mailto:"):
		return ""
	case !hasHref && linkRole:
		return reasonNoHref
	case !hasHref && (attr(n, "id") != "" || strings.TrimSpace(attr(n, "name")) != ""):
		return ""
	case !hasHref && (x.hasListener(n) || hasHrefAttribute(n)):
		return reasonNoHref
	case !hasHref:
		return ""
	case hasPrefixFold(compact, "javascript:"):
		return reasonJavaScript
	case hasPrefixFold(compact, "file:"):
		return reasonFile
	case hasPrefixFold(compact, "ftp:"):
		return reasonFTP
	case x.isHashRoute(href):
		return reasonHashRoute
	case (href == "" || strings.HasPrefix(href, "#")) && x.hasListener(n):
		return reasonScriptFragment
	}
	return ""
}

// isHashRoute reports whether href is a route of a hash router: its
// fragment starts with "/" or "!" (docsify and vue-router's hash mode
// write #/guide, AngularJS #!/guide; #! followed by anything was the
// retired AJAX crawling scheme) and the URL before it is this page's own:
// none (the href is only the fragment) or one that resolves to the page
// URL. Routers listen on document or window, or on hashchange, so the
// anchor has no listener of its own. Crawlers never send the fragment, so
// to them every route is this same page. An href with another page's URL
// before #/ stays a link to that URL.
func (x *extractor) isHashRoute(href string) bool {
	i := strings.IndexByte(href, '#')
	if i < 0 || i+1 == len(href) || (href[i+1] != '/' && href[i+1] != '!') {
		return false
	}
	if i == 0 {
		return true
	}
	u, err := url.Parse(href[:i])
	if err != nil || x.base == nil || x.pageKey == "" {
		return false
	}
	return normURL(x.base.ResolveReference(u).String()) == x.pageKey
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// addUncrawlable records an anchor crawlers cannot follow.
func (x *extractor) addUncrawlable(c *collector, href, reason string) {
	x.page.UncrawlableCount++
	if len(x.page.UncrawlableLinks) >= maxUncrawlable {
		x.t.mark("uncrawlable_links")
		return
	}
	href, _ = clip(href, maxURL)
	x.page.UncrawlableLinks = append(x.page.UncrawlableLinks, UncrawlableLink{
		Href:   href,
		Text:   x.t.cleanText("uncrawlable_links", c.text.String(), maxAnchorText),
		Reason: reason,
	})
}
