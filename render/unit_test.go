package render

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"

	"lekta.dev/lekta/compare"
)

func TestTrackerURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		want bool
	}{
		{"https://www.google-analytics.com/g/collect?v=2", true},
		{"https://www.googletagmanager.com/gtag/js?id=G-1", true},
		{"https://region1.google-analytics.com/g/collect", true},
		{"https://stats.g.doubleclick.net/j/collect", true},
		{"https://pagead2.googlesyndication.com/pagead/js/adsbygoogle.js", true},
		{"https://www.googleadservices.com/pagead/conversion.js", true},
		{"https://static.hotjar.com/c/hotjar-1.js", true},
		{"https://cdn.segment.com/analytics.js/v1/x/analytics.min.js", true},
		{"https://api.segment.io/v1/t", true},
		{"https://connect.facebook.net/en_US/fbevents.js", true},
		{"https://www.facebook.com/tr?id=1&ev=PageView", true},
		{"https://www.facebook.com/tr/", true},
		{"https://example.matomo.cloud/matomo.js", true},
		{"https://plausible.io/js/script.js", true},
		{"https://api-js.mixpanel.com/track", true},
		{"https://api2.amplitude.com/2/httpapi", true},
		{"https://www.clarity.ms/tag/abc", true},
		{"https://bat.bing.com/bat.js", true},
		{"https://analytics.tiktok.com/i18n/pixel/events.js", true},
		{"https://snap.licdn.com/li.lms-analytics/insight.min.js", true},
		{"https://static.ads-twitter.com/uwt.js", true},
		{"https://cdn.heapanalytics.com/js/heap-1.js", true},
		{"https://edge.fullstory.com/s/fs.js", true},
		{"https://secure.quantserve.com/quant.js", true},
		{"https://static.criteo.net/js/ld/publishertag.js", true},
		{"https://cdn.taboola.com/libtrc/x/loader.js", true},
		{"https://widgets.outbrain.com/outbrain.js", true},
		{"HTTPS://WWW.GOOGLE-ANALYTICS.COM./x", true},
		// Not trackers: look-alikes, content on shared hosts, the site itself.
		{"https://www.facebook.com/lekta", false},
		{"https://www.facebook.com/tracking-help", false},
		{"https://notgoogle-analytics.com/x", false},
		{"https://google-analytics.com.evil.example/x", false},
		{"https://shop.example/?ref=www.google-analytics.com", false},
		{"https://fonts.googleapis.com/css2?family=Inter", false},
		{"https://segment.com/docs/", false},
		{"https://shop.example/", false},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := trackerURL(u); got != tc.want {
			t.Errorf("trackerURL(%s) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

func TestFetchPatterns(t *testing.T) {
	t.Parallel()
	ps := fetchPatterns("http://shop.example:8080")
	var urls []string
	types := map[network.ResourceType]bool{}
	for _, p := range ps {
		if p.URLPattern != "" {
			urls = append(urls, p.URLPattern)
		}
		if p.ResourceType != "" {
			types[p.ResourceType] = true
		}
	}
	for _, want := range []string{"http://shop.example:8080/*", "*://*.google-analytics.com/*", "*://google-analytics.com/*", "*://*facebook.com/tr*"} {
		if !slices.Contains(urls, want) {
			t.Errorf("patterns lack %s", want)
		}
	}
	for _, want := range []network.ResourceType{"Document", "Image", "Media", "Font", "Ping", "Other"} {
		if !types[want] {
			t.Errorf("patterns lack type %s", want)
		}
	}
	if types[network.ResourceTypeTextTrack] {
		t.Errorf("Fetch rejects a TextTrack pattern")
	}
	if got := escapePattern(`a*b?c\d`); got != `a\*b\?c\\d` {
		t.Errorf("escapePattern = %s", got)
	}
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"http://Shop.Example/a?b":       "http://shop.example",
		"http://shop.example:80/":       "http://shop.example",
		"https://shop.example:443/":     "https://shop.example",
		"https://shop.example:8443/x":   "https://shop.example:8443",
		"http://[2001:db8::1]:8080/":    "http://[2001:db8::1]:8080",
		"http://xn--bcher-kva.example/": "http://xn--bcher-kva.example",
	}
	for in, want := range tests {
		u, _ := url.Parse(in)
		if got := origin(u); got != want {
			t.Errorf("origin(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestTextLimits(t *testing.T) {
	t.Parallel()
	if got := cutUTF8("aé", 2); got != "a" {
		t.Errorf("cutUTF8 split a rune: %q", got)
	}
	if got := cutUTF8("abc", 5); got != "abc" {
		t.Errorf("cutUTF8 = %q", got)
	}
	long := strings.Repeat("é", maxMessageLen)
	if got := clip(long); len(got) > maxMessageLen+len("…") || !strings.HasSuffix(got, "…") || !utf8Valid(got) {
		t.Errorf("clip: %d bytes", len(got))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestToHeader(t *testing.T) {
	t.Parallel()
	h := toHeader(network.Headers{"content-type": "text/html", "set-cookie": "a=1\nb=2", "x-num": 3.0})
	if h.Get("Content-Type") != "text/html" || !slices.Equal(h.Values("Set-Cookie"), []string{"a=1", "b=2"}) {
		t.Errorf("header %v", h)
	}
	if _, ok := h["X-Num"]; ok {
		t.Errorf("non-string header kept")
	}
	if got := headerValue(network.Headers{"X-Lekta-Refused": "budget"}, "x-lekta-refused"); got != "budget" {
		t.Errorf("headerValue = %q", got)
	}
	var _ compare.Header = h
}

func TestTTFB(t *testing.T) {
	t.Parallel()
	tests := []struct {
		timing *network.ResourceTiming
		want   time.Duration
	}{
		{nil, 0},
		{&network.ResourceTiming{SendStart: 10, ReceiveHeadersStart: 35.5, ReceiveHeadersEnd: 40}, 25500 * time.Microsecond},
		{&network.ResourceTiming{SendStart: 10, ReceiveHeadersEnd: 30}, 20 * time.Millisecond},
		{&network.ResourceTiming{SendStart: 10}, 0},
	}
	for _, tc := range tests {
		if got := ttfb(tc.timing); got != tc.want {
			t.Errorf("ttfb(%+v) = %v, want %v", tc.timing, got, tc.want)
		}
	}
}

// TestTrackerQuiet covers the network half of the completeness rule:
// loaded, and nothing in flight; long-lived and worker requests do not count.
func TestTrackerQuiet(t *testing.T) {
	t.Parallel()
	const main = "F"
	req := func(id string, typ network.ResourceType, loader string) *network.EventRequestWillBeSent {
		return &network.EventRequestWillBeSent{RequestID: network.RequestID(id), LoaderID: cdpLoader(loader), Type: typ, FrameID: main, Request: &network.Request{URL: "http://shop.example/" + id}}
	}
	tests := []struct {
		name  string
		setup func(n *netTracker)
		want  bool
	}{
		{"never loaded", func(n *netTracker) {}, false},
		{"loaded and idle", func(n *netTracker) { n.setLoaded(true) }, true},
		{"request in flight", func(n *netTracker) {
			n.setLoaded(true)
			n.started(req("1", network.ResourceTypeFetch, "L"), main)
		}, false},
		{"request finished", func(n *netTracker) {
			n.started(req("1", network.ResourceTypeFetch, "L"), main)
			n.setLoaded(true)
			n.finished("1")
		}, true},
		{"websocket and event source", func(n *netTracker) {
			n.setLoaded(true)
			n.started(req("1", network.ResourceTypeWebSocket, "L"), main)
			n.started(req("2", network.ResourceTypeEventSource, "L"), main)
		}, true},
		{"worker request", func(n *netTracker) {
			n.setLoaded(true)
			n.started(req("1", network.ResourceTypeScript, ""), main)
		}, true},
		{"blocked request", func(n *netTracker) {
			n.setLoaded(true)
			n.started(req("1", network.ResourceTypeImage, "L"), main)
			n.forget("1")
			n.started(req("1", network.ResourceTypeImage, "L"), main)
		}, true},
		{"request of the previous document", func(n *netTracker) {
			n.setLoaded(true)
			n.started(req("1", network.ResourceTypeFetch, "OLD"), main)
			n.navigated("http://shop.example/next", "NEW")
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var n netTracker
			n.init()
			tc.setup(&n)
			if got := n.quiet(); got != tc.want {
				loaded, pending := n.pending()
				t.Errorf("quiet = %v, want %v (loaded %v, pending %v)", got, tc.want, loaded, pending)
			}
		})
	}
}

func cdpLoader(s string) cdp.LoaderID { return cdp.LoaderID(s) }

func TestRefreshDelay(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0; url=/next", 0},
		{"5", 5000},
		{" 1.5;url=/x", 1500},
		{"url=/x", -1},
		{"", -1},
		{"-1; url=/x", -1},
	} {
		if got := refreshDelay(tc.in); got != tc.want {
			t.Errorf("refreshDelay(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestRefreshIsScheduledWork(t *testing.T) {
	var r refreshState
	r.document("0; url=/next")
	st := pageState{Refresh: -1, Load: 120}
	r.apply(&st)
	if !st.scheduled(5000) {
		t.Errorf("a Refresh header of 0 s is not scheduled work: %+v", st)
	}
	r.refused.Store(true)
	r.apply(&st)
	if st.scheduled(5000) {
		t.Errorf("a refresh whose navigation was refused is still scheduled: %+v", st)
	}
	r.document("")
	meta := pageState{Refresh: 60000, Load: 120}
	r.apply(&meta)
	if meta.scheduled(5000) {
		t.Errorf("a meta refresh due after the budget is scheduled work: %+v", meta)
	}
}

// TestTrackerFaviconUncounted: the browser's own favicon request is not one
// of the page's, even when its start is seen and the report is taken before
// its paused request is refused (CI saw "requests": 2 for a one-request page).
func TestTrackerFaviconUncounted(t *testing.T) {
	t.Parallel()
	const main = "F"
	var n netTracker
	n.init()
	n.started(&network.EventRequestWillBeSent{RequestID: "1", LoaderID: "L", Type: network.ResourceTypeDocument, FrameID: main,
		Initiator: &network.Initiator{Type: network.InitiatorTypeOther}, Request: &network.Request{URL: "http://shop.example/"}}, main)
	n.started(&network.EventRequestWillBeSent{RequestID: "2", LoaderID: "L", Type: network.ResourceTypeOther, FrameID: main,
		Initiator: &network.Initiator{Type: network.InitiatorTypeOther}, Request: &network.Request{URL: "http://shop.example/favicon.ico"}}, main)
	// A prefetch the page asked for is Other too, but the parser started it.
	n.started(&network.EventRequestWillBeSent{RequestID: "3", LoaderID: "L", Type: network.ResourceTypeOther, FrameID: main,
		Initiator: &network.Initiator{Type: network.InitiatorTypeParser, URL: "http://shop.example/"}, Request: &network.Request{URL: "http://shop.example/next.html"}}, main)
	if _, _, _, got := n.main(); got != 2 {
		t.Errorf("requests = %d, want 2 (the document and the page's prefetch, not the favicon)", got)
	}
	n.setLoaded(true)
	n.finished("1")
	n.finished("3")
	if !n.quiet() {
		loaded, pending := n.pending()
		t.Errorf("the favicon holds settling up (loaded %v, pending %v)", loaded, pending)
	}
}
