package render

import (
	"bytes"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// A frame of a library's code is never the answer to "which of the site's
// files did this": the cause names the first frame of the site's own code
// (compare.Origin) and the library before it. A script is a library's by
// its file name, by the banner at its start, or, frame by frame, by its
// source map's original file (under node_modules/).

// libraryFiles names libraries by their script's file name.
var libraryFiles = []struct {
	re   *regexp.Regexp
	name string
}{
	{regexp.MustCompile(`^react-dom([.-]|$)`), "React"},
	{regexp.MustCompile(`^react(\.production|\.development|\.min|\.profiling)`), "React"},
	{regexp.MustCompile(`^(react-router|remix)`), "React Router"},
	{regexp.MustCompile(`^scheduler\.`), "React"},
	{regexp.MustCompile(`^vue(\.global|\.runtime|\.esm|\.cjs|\.min|\.js$)`), "Vue"},
	{regexp.MustCompile(`^vue-router`), "Vue Router"},
	{regexp.MustCompile(`^preact([.-]|$)`), "Preact"},
	{regexp.MustCompile(`^htm(\.|$)`), "Preact"},
	{regexp.MustCompile(`^alpine(js)?([.-]|$)`), "Alpine"},
	{regexp.MustCompile(`^htmx([.-]|$)`), "htmx"},
	{regexp.MustCompile(`^(head-support|hx-)`), "htmx"},
	{regexp.MustCompile(`^jquery([.-]|$)`), "jQuery"},
	{regexp.MustCompile(`^(angular|zone)([.-]|$)`), "Angular"},
	{regexp.MustCompile(`^lit(-html|-element|-all)?([.-]|$)`), "Lit"},
	{regexp.MustCompile(`^svelte([.-]|$)`), "Svelte"},
	{regexp.MustCompile(`^(vendors?|chunk-vendors|framework|polyfills)([.~-]|$)`), "a vendor bundle"},
}

// libraryBanners names libraries by the banner at the start of a script
// (a licence comment or a UMD wrapper's global), for files whose name
// says nothing. Only the first bytes are read: a site's own bundle that
// includes a library further in is the site's.
var libraryBanners = []struct {
	sig  string
	name string
}{
	{"@license React", "React"},
	{"* vue v", "Vue"},
	{"Vue.js v", "Vue"},
	{"jQuery v", "jQuery"},
	{"jQuery JavaScript Library", "jQuery"},
	{"@license Angular", "Angular"},
	{"var htmx=function", "htmx"},
	{"Alpine.js v", "Alpine"},
}

// bannerBytes is how much of a script's start is read for a banner.
const bannerBytes = 512

// scriptLibrary is the library a script is, by name or banner, "" when
// it says it is none.
func scriptLibrary(rawURL string, body []byte) string {
	if name := fileLibrary(rawURL); name != "" {
		return name
	}
	head := body[:min(len(body), bannerBytes)]
	for _, b := range libraryBanners {
		if bytes.Contains(head, []byte(b.sig)) {
			return b.name
		}
	}
	return ""
}

// fileLibrary is the library a script's file name names, "".
func fileLibrary(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	if strings.Contains(u.Path, "/node_modules/") {
		return sourceLibrary(u.Path)
	}
	file := strings.ToLower(path.Base(u.Path))
	for _, l := range libraryFiles {
		if l.re.MatchString(file) {
			return l.name
		}
	}
	return ""
}

// packageLibraries names the libraries of npm packages a source map's
// original files come from; any other package is named as it is.
var packageLibraries = map[string]string{
	"react": "React", "react-dom": "React", "scheduler": "React", "react-router": "React Router",
	"react-router-dom": "React Router", "@remix-run/router": "React Router",
	"vue": "Vue", "vue-router": "Vue Router", "preact": "Preact", "htm": "Preact",
	"preact-router": "Preact", "svelte": "Svelte", "lit": "Lit", "lit-html": "Lit", "lit-element": "Lit",
	"@lit/reactive-element": "Lit", "@lit-labs/ssr-client": "Lit", "alpinejs": "Alpine", "htmx.org": "htmx",
	"jquery": "jQuery", "next": "Next.js", "nuxt": "Nuxt", "@sveltejs/kit": "SvelteKit",
}

// sourceLibrary is the library an original file of a source map belongs
// to: the npm package it sits in (node_modules/<package>/...), or a
// framework's own path ("vite/", "webpack/runtime"); "" for the site's
// own file.
func sourceLibrary(source string) string {
	s := strings.ReplaceAll(source, "\\", "/")
	i := strings.LastIndex(s, "node_modules/")
	if i < 0 {
		switch {
		case strings.Contains(s, "webpack/runtime/"), strings.Contains(s, "webpack/bootstrap"):
			return "webpack"
		case strings.HasPrefix(s, "vite/") || strings.Contains(s, "/vite/") || strings.Contains(s, "\x00vite/"):
			return "Vite"
		}
		return ""
	}
	rest := s[i+len("node_modules/"):]
	parts := strings.SplitN(rest, "/", 3)
	pkg := parts[0]
	if strings.HasPrefix(pkg, "@") && len(parts) > 1 {
		pkg += "/" + parts[1]
	}
	if name, ok := packageLibraries[pkg]; ok {
		return name
	}
	if strings.HasPrefix(pkg, "@vue/") {
		return "Vue"
	}
	if strings.HasPrefix(pkg, "@angular/") {
		return "Angular"
	}
	return pkg
}

// sourceMapURL is the URL of a script's source map: its SourceMap (or
// X-SourceMap) header, else its last sourceMappingURL comment, resolved
// against the script's URL; a data: URL as it stands; "" for none.
func sourceMapURL(rawURL string, header http.Header, body []byte) string {
	ref := header.Get("SourceMap")
	if ref == "" {
		ref = header.Get("X-SourceMap")
	}
	if ref == "" {
		i := bytes.LastIndex(body, []byte("# sourceMappingURL="))
		if i < 2 || (body[i-1] != '/' && body[i-1] != '*') || (body[i-2] != '/' && body[i-2] != '*') {
			return ""
		}
		rest := body[i+len("# sourceMappingURL="):]
		if j := bytes.IndexAny(rest, " \t\r\n*"); j >= 0 {
			rest = rest[:j]
		}
		ref = string(rest)
	}
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	if strings.HasPrefix(ref, "data:") {
		return ref
	}
	base, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	u, err := base.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return u.String()
}
