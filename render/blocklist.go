package render

import (
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
)

// Reasons a request is refused, the keys of compare.RenderDetails.Blocked.
const (
	// ReasonImage: an image (including favicons the browser fetches by itself).
	ReasonImage = "image"
	// ReasonMedia: audio, video or text tracks.
	ReasonMedia = "media"
	// ReasonFont: a web font.
	ReasonFont = "font"
	// ReasonAnalytics: a host on the analytics and advertising list (trackerHosts).
	ReasonAnalytics = "analytics"
	// ReasonBeacon: navigator.sendBeacon, <a ping> and CSP violation reports.
	ReasonBeacon = "beacon"
	// ReasonRobots: a same-origin request that robots.txt disallows.
	ReasonRobots = "robots"
	// ReasonNavigation: a main-frame navigation or redirect hop that CheckURL
	// refused, or one past the navigation or redirect cap.
	ReasonNavigation = "navigation"
	// ReasonBudget: a request past the per-audit request or byte budget.
	ReasonBudget = "budget"
	// ReasonPopup: a window the page opened (closed at once).
	ReasonPopup = "popup"
	// ReasonMethod: a request with a method other than GET or HEAD (a form
	// submission, fetch or XHR POST, PUT, DELETE...), or a CORS preflight
	// for one. The lane never sends data to a site.
	ReasonMethod = "method"
	// ReasonRedirects: a redirect hop past MaxRedirects of any request chain.
	ReasonRedirects = "redirects"
	// ReasonPrefetch: a speculative request (<link rel=prefetch>), never
	// needed to render the page.
	ReasonPrefetch = "prefetch"
	// ReasonWebSocket: a WebSocket the page or a worker opened; Googlebot's
	// renderer allows none, and frames would send page data out.
	ReasonWebSocket = "websocket"
)

// trackerHosts is the maintained list of analytics, tag-manager, session
// recording and advertising hosts whose requests the render lane never makes,
// so an audit never shows up in a site's visitor numbers. An entry matches
// the host itself and every subdomain of it.
var trackerHosts = []string{
	// Google Analytics, Tag Manager, Ads
	"google-analytics.com",
	"analytics.google.com",
	"googletagmanager.com",
	"googletagservices.com",
	"googleadservices.com",
	"googlesyndication.com",
	"adservice.google.com",
	"doubleclick.net",
	"googleoptimize.com",
	// Session recording and product analytics
	"hotjar.com",
	"hotjar.io",
	"cdn.segment.com",
	"segment.io",
	"mixpanel.com",
	"mxpnl.com",
	"amplitude.com",
	"clarity.ms",
	"heapanalytics.com",
	"fullstory.com",
	"mouseflow.com",
	"crazyegg.com",
	"posthog.com",
	"kissmetrics.io",
	"chartbeat.com",
	"chartbeat.net",
	"hs-analytics.net",
	"static.cloudflareinsights.com",
	"stats.wp.com",
	"pixel.wp.com",
	"statcounter.com",
	"getclicky.com",
	"mc.yandex.ru",
	"hm.baidu.com",
	"scorecardresearch.com",
	// Privacy-friendly analytics are still visitor counts
	"plausible.io",
	"matomo.cloud",
	"innocraft.cloud",
	// Advertising pixels and networks
	"connect.facebook.net",
	"bat.bing.com",
	"analytics.tiktok.com",
	"snap.licdn.com",
	"ads.linkedin.com",
	"ads-twitter.com",
	"analytics.twitter.com",
	"ct.pinterest.com",
	"alb.reddit.com",
	"tr.snapchat.com",
	"sc-static.net",
	"quantserve.com",
	"quantcount.com",
	"criteo.com",
	"criteo.net",
	"taboola.com",
	"outbrain.com",
	"amazon-adsystem.com",
	"adnxs.com",
	"adroll.com",
	"rubiconproject.com",
	"pubmatic.com",
	"openx.net",
	"casalemedia.com",
	"moatads.com",
}

// trackerPaths are trackers that share a host with content: the host (and
// its subdomains) plus a path prefix.
var trackerPaths = []struct{ host, path string }{
	{"facebook.com", "/tr"}, // Meta pixel
}

// trackerHost reports whether host (lower-case, no port) is on the list or a
// subdomain of an entry.
func trackerHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, h := range trackerHosts {
		if hostMatches(host, h) {
			return true
		}
	}
	return false
}

// trackerURL reports whether u is a request to an analytics or advertising
// host or path.
func trackerURL(u *url.URL) bool {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if trackerHost(host) {
		return true
	}
	for _, p := range trackerPaths {
		if hostMatches(host, p.host) && (u.Path == p.path || strings.HasPrefix(u.Path, p.path+"/")) {
			return true
		}
	}
	return false
}

func hostMatches(host, entry string) bool {
	return host == entry || strings.HasSuffix(host, "."+entry)
}

// blockedTypes maps the resource types the render lane never loads to their
// reason.
var blockedTypes = map[network.ResourceType]string{
	network.ResourceTypePrefetch:           ReasonPrefetch,
	network.ResourceTypeImage:              ReasonImage,
	network.ResourceTypeMedia:              ReasonMedia,
	network.ResourceTypeTextTrack:          ReasonMedia,
	network.ResourceTypeFont:               ReasonFont,
	network.ResourceTypePing:               ReasonBeacon,
	network.ResourceTypeCSPViolationReport: ReasonBeacon,
}

// pausedTypes are the resource types of blockedTypes that Fetch accepts as a
// pattern (it rejects TextTrack, which media blocking covers anyway).
var pausedTypes = []network.ResourceType{
	network.ResourceTypeImage,
	network.ResourceTypeMedia,
	network.ResourceTypeFont,
	network.ResourceTypePing,
	network.ResourceTypeCSPViolationReport,
}

// fetchPatterns are the Fetch.enable patterns: only matching requests are
// paused (each pause costs a round trip), and decide() has the final word,
// since URL patterns are coarser than host matching. origin, when not empty,
// adds every request to the page's own origin (for robots.txt checks).
func fetchPatterns(origin string) []*fetch.RequestPattern {
	var ps []*fetch.RequestPattern
	for _, t := range []network.ResourceType{
		// Documents: every main-frame navigation and redirect hop is checked.
		network.ResourceTypeDocument,
		// Other: favicons and the like, blocked when they ask for an image;
		// <object> and <embed>, blocked when they name an image or media file.
		// (Fetch takes no Prefetch pattern: the proxy refuses prefetches.)
		network.ResourceTypeOther,
	} {
		ps = append(ps, &fetch.RequestPattern{ResourceType: t, RequestStage: fetch.RequestStageRequest})
	}
	for _, t := range pausedTypes {
		ps = append(ps, &fetch.RequestPattern{ResourceType: t, RequestStage: fetch.RequestStageRequest})
	}
	for _, h := range trackerHosts {
		ps = append(ps,
			&fetch.RequestPattern{URLPattern: "*://" + h + "/*", RequestStage: fetch.RequestStageRequest},
			&fetch.RequestPattern{URLPattern: "*://*." + h + "/*", RequestStage: fetch.RequestStageRequest})
	}
	for _, p := range trackerPaths {
		ps = append(ps, &fetch.RequestPattern{URLPattern: "*://*" + p.host + p.path + "*", RequestStage: fetch.RequestStageRequest})
	}
	if origin != "" {
		ps = append(ps, &fetch.RequestPattern{URLPattern: escapePattern(origin) + "/*", RequestStage: fetch.RequestStageRequest})
	}
	return ps
}

// escapePattern escapes the Fetch pattern wildcards in s.
func escapePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`)
	return r.Replace(s)
}
