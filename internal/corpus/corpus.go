// Package corpus builds and serves the test corpus: small apps written
// here on real framework packages from the npm registry (React, Vue,
// Preact, Svelte, Lit, Alpine, htmx), each in a server-rendered and a
// client-rendered variant, so that what Lekta says about a framework is
// checked on that framework's own build.
//
// The packages are pinned by version and integrity in
// testdata/corpus/package-lock.json; Build fetches them from the registry
// into a git-ignored cache (.cache/corpus, or LEKTA_CORPUS_CACHE), checks
// every tarball against its integrity, and lays them out as npm would.
// The apps are bundled in Go with esbuild's library, minified and with
// source maps, the way sites ship them; Node runs only what esbuild cannot:
// each framework's own server renderer, and Svelte's compiler. A build is
// kept in the cache under a hash of everything it was made from, so the
// test binaries of every package share one.
//
// Each variant answers on a host of its own, "<app>-<variant>.example"
// (Register adds them to a test site), and testdata/corpus/snippets (the
// snippets people paste into a head) on SnippetsHost.
package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// SnippetsHost serves testdata/corpus/snippets.
const SnippetsHost = "snippets.example"

// ExpectFile is the name of the file, next to each app and the snippets,
// that says what Lekta's report of each page must be; it is not part of
// the build.
const ExpectFile = "expect.json"

// builderVersion changes when the build's output changes for the same
// inputs; it is part of the cache key.
const builderVersion = "1"

// Corpus is a built corpus.
type Corpus struct {
	// Dir is the build's folder in the cache.
	Dir string
	// Apps are the apps, by name.
	Apps []*App
	// Snippets is testdata/corpus/snippets.
	Snippets string
}

// App is one app of the corpus.
type App struct {
	Name      string
	Framework string
	About     string
	Variants  []*Variant
}

// Variant is an app built one way: "ssr" (the framework's server renderer,
// then hydration) or "csr" (rendered in the browser).
type Variant struct {
	App  *App
	Name string
	// Host is the name the variant answers on.
	Host string
	// Public is the folder of its static files.
	Public string
	// Routes are its answers by path ("*": every other path).
	Routes map[string]*Route
	// Assets maps a bundle's key to its address ("main" → "/assets/main-….js").
	Assets map[string]string
}

// Route is one answer of a variant.
type Route struct {
	Status   int               `json:"status"`
	Headers  map[string]string `json:"headers,omitempty"`
	Body     string            `json:"body,omitempty"`
	Redirect string            `json:"redirect,omitempty"`
	// Htmx answers requests htmx made (HX-Request: true) instead.
	Htmx *Route `json:"htmx,omitempty"`
}

// Root is testdata/corpus.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "corpus")
}

// cacheRoot is where packages and builds are kept.
func cacheRoot() string {
	if d := os.Getenv("LEKTA_CORPUS_CACHE"); d != "" {
		return d
	}
	return filepath.Join(Root(), "..", "..", ".cache", "corpus")
}

// registry is the npm registry the packages come from.
func registry() string {
	for _, k := range []string{"LEKTA_NPM_REGISTRY", "npm_config_registry"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return "https://registry.npmjs.org"
}

var shared struct {
	once sync.Once
	c    *Corpus
	err  error
}

// Shared returns the corpus, built (or found in the cache) once per test
// binary. Without Node or the registry the test fails when CI is set and
// is skipped otherwise.
func Shared(tb testing.TB) *Corpus {
	tb.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		shared.c, shared.err = Build(ctx)
	})
	if shared.err != nil {
		if os.Getenv("CI") != "" || !errors.Is(shared.err, ErrUnavailable) {
			tb.Fatalf("build the framework corpus: %v", shared.err)
		}
		tb.Skipf("build the framework corpus: %v; skipping (set CI to make this a failure)", shared.err)
	}
	return shared.c
}

// ErrUnavailable: something the build needs from outside (Node, the
// registry) is not there.
var ErrUnavailable = errors.New("corpus: a build tool or the registry is unavailable")

// Build builds the corpus, or returns the cached build of the same inputs.
func Build(ctx context.Context) (*Corpus, error) {
	root := Root()
	key, err := inputsKey(root)
	if err != nil {
		return nil, err
	}
	cache := cacheRoot()
	dir := filepath.Join(cache, "build-"+key)
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return nil, err
		}
		unlock, err := lockDir(filepath.Join(cache, ".lock"))
		if err != nil {
			return nil, err
		}
		defer unlock()
		if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
			if err := build(ctx, root, cache, dir); err != nil {
				return nil, err
			}
		}
	}
	return load(root, dir)
}

// inputsKey hashes everything a build is made from.
func inputsKey(root string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "builder %s\n", builderVersion)
	for _, s := range []string{driverJS, svelteJS} {
		fmt.Fprintf(h, "%d %s\n", len(s), s)
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ExpectFile {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash the corpus sources: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// build makes a fresh build in dir: packages, then every app.
func build(ctx context.Context, root, cache, dir string) error {
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("%w: node: %v", ErrUnavailable, err)
	}
	lock, err := os.ReadFile(filepath.Join(root, "package-lock.json"))
	if err != nil {
		return err
	}
	pkgs, err := readLock(lock)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	modules := filepath.Join(cache, "modules-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(modules, "done")); err != nil {
		os.RemoveAll(modules)
		if err := installModules(ctx, registry(), filepath.Join(cache, "tarballs"), modules, pkgs); err != nil {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		if err := os.WriteFile(filepath.Join(modules, "done"), nil, 0o644); err != nil {
			return err
		}
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	b := &builder{root: root, out: tmp, modules: filepath.Join(modules, "node_modules"), node: node}
	if err := b.all(ctx); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
		return err
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	pruneBuilds(cache, dir)
	return nil
}

// pruneBuilds removes the cache's other builds but the newest two.
func pruneBuilds(cache, keep string) {
	old, _ := filepath.Glob(filepath.Join(cache, "build-*"))
	old = slices.DeleteFunc(old, func(p string) bool { return p == keep || strings.HasSuffix(p, ".tmp") })
	sort.Slice(old, func(i, j int) bool { return modTime(old[i]).After(modTime(old[j])) })
	for i, p := range old {
		if i >= 1 {
			os.RemoveAll(p)
		}
	}
}

func modTime(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// load reads a finished build.
func load(root, dir string) (*Corpus, error) {
	c := &Corpus{Dir: dir, Snippets: filepath.Join(root, "snippets")}
	names, err := appNames(root)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		m, err := readManifest(root, name)
		if err != nil {
			return nil, err
		}
		a := &App{Name: name, Framework: m.Framework, About: m.About}
		for _, vn := range m.variantNames() {
			v := &Variant{App: a, Name: vn, Host: name + "-" + vn + ".example", Public: filepath.Join(dir, name, vn, "public")}
			b, err := os.ReadFile(filepath.Join(dir, name, vn, "routes.json"))
			if err != nil {
				return nil, err
			}
			var built struct {
				Routes map[string]*Route `json:"routes"`
				Assets map[string]string `json:"assets"`
			}
			if err := json.Unmarshal(b, &built); err != nil {
				return nil, fmt.Errorf("%s/%s: %w", name, vn, err)
			}
			v.Routes, v.Assets = built.Routes, built.Assets
			a.Variants = append(a.Variants, v)
		}
		c.Apps = append(c.Apps, a)
	}
	return c, nil
}

// appNames lists testdata/corpus/apps.
func appNames(root string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(root, "apps"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Variants lists every variant of every app.
func (c *Corpus) Variants() []*Variant {
	var out []*Variant
	for _, a := range c.Apps {
		out = append(out, a.Variants...)
	}
	return out
}

// Hosts are the names the corpus answers on, SnippetsHost included.
func (c *Corpus) Hosts() []string {
	out := []string{SnippetsHost}
	for _, v := range c.Variants() {
		out = append(out, v.Host)
	}
	return out
}

// Variant returns the named app's variant, or nil.
func (c *Corpus) Variant(app, variant string) *Variant {
	for _, v := range c.Variants() {
		if v.App.Name == app && v.Name == variant {
			return v
		}
	}
	return nil
}

// Snippets are the head snippets' pages of testdata/corpus/snippets that
// the tests audit (landing.html is where the meta refresh leads).
var Snippets = []string{"gtm-head.html", "cookie-banner.html", "meta-refresh.html", "two-titles.html"}

// Page is one page of the corpus the tests audit.
type Page struct {
	Host, Path string
	// Expect is the expectations file that holds the page's entry, Key
	// its entry ("csr /products", or a snippet's file name).
	Expect, Key string
	// Redirect is where the server sends the page with a 3xx, "" when it
	// answers itself.
	Redirect string
}

// URL is the page's address.
func (p Page) URL() string { return "http://" + p.Host + p.Path }

// Pages are every variant's /, /products, /old-products, a path no route
// knows (/nowhere: the not-found route) and /legacy where it has one,
// then the snippets.
func (c *Corpus) Pages() []Page {
	var out []Page
	for _, v := range c.Variants() {
		expect := filepath.Join(Root(), "apps", v.App.Name, ExpectFile)
		for _, p := range []string{"/", "/products", "/old-products", "/nowhere", "/legacy"} {
			rt := v.Routes[p]
			if p == "/legacy" && rt == nil {
				continue
			}
			page := Page{Host: v.Host, Path: p, Expect: expect, Key: v.Name + " " + p}
			if rt != nil {
				page.Redirect = rt.Redirect
			}
			out = append(out, page)
		}
	}
	for _, s := range Snippets {
		out = append(out, Page{Host: SnippetsHost, Path: "/" + s, Expect: filepath.Join(Root(), "snippets", ExpectFile), Key: s})
	}
	return out
}
