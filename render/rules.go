package render

import (
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
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

// redirectBook follows redirect chains through the proxy: each 3xx
// response notes the depth its Location will be requested at, so a chain of
// any kind of request (script, stylesheet, fetch, worker, frame) is cut
// after MaxRedirects hops. Chromium itself would follow 20.
type redirectBook struct {
	mu    sync.Mutex
	depth map[string]int // canonical URL -> redirects that led to it
}

// take returns how many redirects led to u (0 for a fresh request) and
// forgets it, so a later request of the same URL starts afresh.
func (b *redirectBook) take(u *url.URL) int {
	key := chainKey(u)
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.depth[key]
	delete(b.depth, key)
	return d
}

// note records that a response at depth redirects to loc, relative to base.
func (b *redirectBook) note(base *url.URL, loc string, depth int) {
	next, err := base.Parse(loc)
	if err != nil || (next.Scheme != "http" && next.Scheme != "https") {
		return
	}
	key := chainKey(next)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.depth == nil {
		b.depth = make(map[string]int)
	}
	if len(b.depth) >= maxGone {
		clear(b.depth)
	}
	b.depth[key] = max(b.depth[key], depth+1)
}

// chainKey is u as Chromium requests it: lower-case scheme and host,
// default port dropped, no fragment, and the query's bytes that Chromium
// escapes escaped, so a Location and the request it causes meet.
func chainKey(u *url.URL) string {
	c := *u
	c.Scheme = strings.ToLower(c.Scheme)
	c.Host = strings.ToLower(c.Host)
	if p := c.Port(); (c.Scheme == "http" && p == "80") || (c.Scheme == "https" && p == "443") {
		c.Host = strings.TrimSuffix(c.Host, ":"+p)
	}
	c.Fragment, c.RawFragment, c.User = "", "", nil
	c.RawQuery = escapeQuery(c.RawQuery)
	if c.Path == "" {
		c.Path = "/"
	}
	return c.String()
}

// escapeQuery percent-encodes the bytes of a query that Chromium encodes
// before sending it.
func escapeQuery(q string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\'' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
