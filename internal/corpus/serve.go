package corpus

import (
	"html"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Site is where the corpus is served: a test site's handler registry.
type Site interface {
	Handle(pattern string, h http.Handler)
}

// Register serves every variant on its host, and the snippets on
// SnippetsHost, from site.
func (c *Corpus) Register(site Site) {
	for _, v := range c.Variants() {
		site.Handle(v.Host+"/", v)
	}
	site.Handle(SnippetsHost+"/", http.FileServer(http.Dir(c.Snippets)))
}

// ServeHTTP answers as the variant's server does: a route of its own, a
// file of its site, else its "*" route (the server renderer's not-found
// page, or the client app's shell).
func (v *Variant) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if rt := v.Routes[r.URL.Path]; rt != nil {
		answer(w, r, rt)
		return
	}
	if v.serveFile(w, r) {
		return
	}
	if rt := v.Routes["*"]; rt != nil {
		answer(w, r, rt)
		return
	}
	http.NotFound(w, r)
}

// serveFile answers with a file of the variant's site, if there is one.
func (v *Variant) serveFile(w http.ResponseWriter, r *http.Request) bool {
	p := path.Clean("/" + r.URL.Path)
	file := filepath.Join(v.Public, filepath.FromSlash(p))
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.IsDir() {
		return false
	}
	if ct := contentType(p); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, p, fi.ModTime(), f)
	return true
}

// contentType is the media type a site's server sends for a file.
func contentType(p string) string {
	switch path.Ext(p) {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".map", ".json":
		return "application/json"
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return ""
}

// answer writes a route's answer; __PATH__ in its body is the request's
// path, escaped.
func answer(w http.ResponseWriter, r *http.Request, rt *Route) {
	if rt.Htmx != nil {
		w.Header().Add("Vary", "HX-Request")
		if r.Header.Get("HX-Request") == "true" {
			rt = rt.Htmx
		}
	}
	for k, val := range rt.Headers {
		w.Header().Set(k, val)
	}
	if rt.Redirect != "" {
		w.Header().Set("Location", rt.Redirect)
		w.WriteHeader(rt.Status)
		return
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	body := strings.ReplaceAll(rt.Body, "__PATH__", html.EscapeString(r.URL.Path))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rt.Status)
	if r.Method != http.MethodHead {
		io.WriteString(w, body)
	}
}
