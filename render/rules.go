package render

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"lekta.dev/lekta/internal/endbody"
)

// rules are what one audit's proxy enforces on every request that reaches
// it, from whatever part of the browser: the page, a frame, a dedicated,
// shared or service worker, a preload or a redirect hop. They are the
// network-level half of the lane's promises; Fetch interception in the page
// (intercept.go) is the other half, which refuses some requests before they
// ever reach the proxy.
type rules struct {
	// userAgent replaces the User-Agent of every request, so workers the
	// page's user agent override does not reach identify themselves too.
	userAgent string
	// allow says whether robots.txt lets the lane fetch u of the page's own
	// origin; nil allows everything.
	allow func(u *url.URL) (bool, string)
	// sent is told of every request that left (Request.Sent); nil tells nobody.
	sent func(Sent)
}

// allowedMethod reports whether a request may leave: GET and HEAD, and a
// CORS preflight (OPTIONS, never with a body, never with credentials) for
// a GET or HEAD. Everything else would send data to the site.
func allowedMethod(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return noBody(r)
	case http.MethodOptions:
		m := r.Header.Get("Access-Control-Request-Method")
		return (m == http.MethodGet || m == http.MethodHead) && noBody(r)
	}
	return false
}

// noBody reports whether r carries no body at all.
func noBody(r *http.Request) bool {
	if len(r.TransferEncoding) > 0 {
		return false
	}
	return r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody
}

// prefetch reports whether the browser marked the request as speculative
// (<link rel=prefetch>, speculation rules): never needed to render the page.
func prefetch(h http.Header) bool {
	for _, name := range []string{"Sec-Purpose", "Purpose", "X-Purpose"} {
		if strings.Contains(strings.ToLower(h.Get(name)), "prefetch") {
			return true
		}
	}
	return false
}

// destReasons maps the Sec-Fetch-Dest values of blocked kinds to their reason.
var destReasons = map[string]string{
	"image": ReasonImage,
	"video": ReasonMedia,
	"audio": ReasonMedia,
	"track": ReasonMedia,
	"font":  ReasonFont,
}

// mediaReason is the reason to refuse a response of this Content-Type
// (images, audio, video, fonts), or "".
func mediaReason(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	major, minor, _ := strings.Cut(mt, "/")
	switch {
	case major == "image":
		return ReasonImage
	case major == "video", major == "audio":
		return ReasonMedia
	case major == "font", strings.HasPrefix(minor, "font-"), strings.HasPrefix(minor, "x-font-"),
		minor == "vnd.ms-fontobject":
		return ReasonFont
	}
	return ""
}

// extensionReasons maps file extensions that name images, media and fonts
// to their reason, for requests whose type does not say what they fetch
// (<object>, <embed>, an <iframe> or a prefetch of an image).
var extensionReasons = map[string]string{}

func init() {
	for _, e := range strings.Fields(".png .jpg .jpeg .jpe .gif .webp .avif .apng .bmp .ico .cur .tif .tiff .svg .svgz .heic .heif .jxl") {
		extensionReasons[e] = ReasonImage
	}
	for _, e := range strings.Fields(".mp4 .m4v .m4a .webm .mov .mkv .avi .ogv .ogg .oga .opus .mp3 .wav .flac .aac .m3u8 .mpd .ts .vtt .srt") {
		extensionReasons[e] = ReasonMedia
	}
	for _, e := range strings.Fields(".woff .woff2 .ttf .otf .eot") {
		extensionReasons[e] = ReasonFont
	}
}

// extensionReason is the reason to refuse u by its path's extension, or "".
func extensionReason(u *url.URL) string {
	return extensionReasons[strings.ToLower(path.Ext(u.Path))]
}

// check returns why the request must not leave, or "": the rules in the
// order that names the most specific reason.
func (p *proxy) check(r *http.Request, u *url.URL, hops int, rl *rules) (reason, rule string) {
	switch {
	case trackerURL(u):
		return ReasonAnalytics, ""
	case webSocket(r):
		return ReasonWebSocket, ""
	case upgrade(r):
		return ReasonMethod, "Upgrade: " + r.Header.Get("Upgrade")
	case !allowedMethod(r):
		return ReasonMethod, r.Method
	case prefetch(r.Header):
		return ReasonPrefetch, ""
	case destReasons[r.Header.Get("Sec-Fetch-Dest")] != "":
		return destReasons[r.Header.Get("Sec-Fetch-Dest")], ""
	case hops > MaxRedirects:
		return ReasonRedirects, ""
	}
	if rl.allow != nil {
		if ok, rule := rl.allow(u); !ok {
			return ReasonRobots, rule
		}
	}
	if !p.admit() {
		return ReasonBudget, ""
	}
	return "", ""
}

// scrub removes credentials and cookies from a request the lane forwards,
// counting what the page tried, and sets the lane's user agent.
func (p *proxy) scrub(h http.Header, rl *rules) {
	cookies, creds := 0, 0
	if len(h.Values("Cookie")) > 0 {
		cookies++
	}
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		if len(h.Values(name)) > 0 {
			creds++
		}
	}
	h.Del("Cookie")
	h.Del("Authorization")
	h.Del("Proxy-Authorization")
	h.Set("User-Agent", rl.userAgent)
	p.count(cookies, creds)
}

// webSocket reports whether r asks for a WebSocket: an HTTP/1.1 Upgrade or
// an HTTP/2 extended CONNECT (RFC 8441).
func webSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") ||
		r.Method == http.MethodConnect && strings.EqualFold(r.Header.Get(":protocol"), "websocket")
}

// upgrade reports whether r asks to switch protocols at all. No upgrade
// is forwarded: what an upgraded connection carries would be page data
// the rules cannot see.
func upgrade(r *http.Request) bool {
	return r.Header.Get("Upgrade") != "" || r.Method == http.MethodConnect
}

// navigation reports whether a request loads a document into the page or
// a frame: Sec-Fetch-Dest says so on https; on http, where Chromium sends
// no Sec-Fetch headers, Upgrade-Insecure-Requests marks navigations.
func navigation(h http.Header) bool {
	switch h.Get("Sec-Fetch-Dest") {
	case "document", "iframe", "frame":
		return true
	case "":
		return h.Get("Upgrade-Insecure-Requests") == "1"
	}
	return false
}

// badLocation reports whether a Location has a backslash, a space or a
// control byte: the plain lane refuses such a redirect of the page, since
// browsers and Go read it differently, and so does the render lane.
func badLocation(loc string) bool {
	return strings.ContainsFunc(loc, func(r rune) bool { return r <= 0x20 || r == 0x7f || r == '\\' })
}

// locationRefusal is inspectResponse's error for a main-frame redirect
// whose Location badLocation refuses.
type locationRefusal struct{ loc string }

func (l locationRefusal) Error() string {
	return fmt.Sprintf("%s: %q contains a space, control byte or backslash", ErrBadLocation.Error(), l.loc)
}

// mediaRefusal is inspectResponse's error for a response of a blocked type.
type mediaRefusal struct{ reason string }

func (m mediaRefusal) Error() string { return "refused response type: " + m.reason }

// inspectResponse applies the rules to a response before the browser sees
// it: images, media and fonts are refused by their Content-Type, whatever
// asked for them; cookies and authentication challenges are dropped (the
// lane answers none); a redirect's Location is noted for the chain cap;
// and the body counts against the byte budget.
func (p *proxy) inspectResponse(resp *http.Response) error {
	x := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if reason := mediaReason(resp.Header.Get("Content-Type")); reason != "" {
		// It reached the site, which answered; the browser gets nothing.
		x.sent.finish(resp.StatusCode, 0, nil)
		return mediaRefusal{reason: reason}
	}
	cookies, creds := len(resp.Header.Values("Set-Cookie")), 0
	resp.Header.Del("Set-Cookie")
	for _, name := range []string{"WWW-Authenticate", "Proxy-Authenticate"} {
		if len(resp.Header.Values(name)) > 0 {
			creds++
			resp.Header.Del(name)
		}
	}
	p.count(cookies, creds)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc := resp.Header.Get("Location"); loc != "" {
			if navigation(resp.Request.Header) && badLocation(loc) {
				// A page's: refused as the plain lane refuses it.
				x.sent.finish(resp.StatusCode, 0, nil)
				return locationRefusal{loc: loc}
			}
			p.redirects.note(x.raw, loc, x.hops)
		}
	}
	resp.Body = &countingBody{ReadCloser: resp.Body, p: p}
	p.bodies.watch(resp, x.url.String())
	if x.sent != nil {
		sent, status := x.sent, resp.StatusCode
		resp.Body = &endbody.Body{ReadCloser: resp.Body, Done: func(n int64, err error) { sent.finish(status, n, err) }}
	}
	return nil
}

// count adds to the cookie and credential counters.
func (p *proxy) count(cookies, credentials int) {
	if cookies == 0 && credentials == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cookies += cookies
	p.credentials += credentials
}
