package corpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// manifest is an app's app.json: how each variant is built and answered.
type manifest struct {
	Framework string                  `json:"framework"`
	About     string                  `json:"about"`
	Variants  map[string]*variantSpec `json:"variants"`
}

// variantSpec is one variant of app.json.
type variantSpec struct {
	// Bundles are the browser bundles esbuild makes.
	Bundles []bundleSpec `json:"bundles"`
	// Server is the entry of the server renderer, run by Node: it exports
	// render(path, ctx) returning {status, html}.
	Server string `json:"server"`
	// ServerAlias maps imports of the server bundle to other packages.
	ServerAlias map[string]string `json:"server_alias"`
	// Vendor copies package files to the site: public path → path under
	// node_modules.
	Vendor map[string]string `json:"vendor"`
	// Public is a folder of the app copied to the site, __ASSET_key__ in
	// its HTML replaced by the bundle's address.
	Public string `json:"public"`
	// Routes are the answers by path; "*" answers every other path that
	// is not a file of the site.
	Routes map[string]*routeSpec `json:"routes"`
}

// bundleSpec is one esbuild bundle.
type bundleSpec struct {
	Entry string `json:"entry"`
	// Name is the output's path without extension ("assets/main").
	Name string `json:"name"`
	// Hash adds a content hash to the file name, as Vite does.
	Hash bool `json:"hash"`
	// Format is "esm" (default) or "iife".
	Format string `json:"format"`
	// Globals makes imports read a global the page's other scripts set
	// ("react" → "React"), for apps that load a framework's UMD build.
	Globals map[string]string `json:"globals"`
	Alias   map[string]string `json:"alias"`
	// JSX is "automatic" (default) or "classic"; ImportSource is the
	// automatic runtime's package, Factory and Fragment the classic ones.
	JSX          string            `json:"jsx"`
	ImportSource string            `json:"jsx_import_source"`
	Factory      string            `json:"jsx_factory"`
	Fragment     string            `json:"jsx_fragment"`
	Define       map[string]string `json:"define"`
	// Sourcemap is "linked" (default: a .map file the bundle names),
	// "inline" or "none".
	Sourcemap string `json:"sourcemap"`
	// NoMinify leaves the bundle readable.
	NoMinify bool `json:"no_minify"`
}

// routeSpec is one answer of app.json.
type routeSpec struct {
	// SSR answers with the server renderer's output for that path.
	SSR string `json:"ssr"`
	// File answers with a file of the app.
	File     string            `json:"file"`
	Redirect string            `json:"redirect"`
	Status   int               `json:"status"`
	Headers  map[string]string `json:"headers"`
	Htmx     *routeSpec        `json:"htmx"`
}

// key is a bundle's name in Assets and in __ASSET_key__: its base name.
func (b bundleSpec) key() string { return filepath.Base(b.Name) }

func readManifest(root, app string) (*manifest, error) {
	b, err := os.ReadFile(filepath.Join(root, "apps", app, "app.json"))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s/app.json: %w", app, err)
	}
	if len(m.Variants) == 0 {
		return nil, fmt.Errorf("%s/app.json: no variants", app)
	}
	return &m, nil
}

// variantNames are the manifest's variants in a fixed order.
func (m *manifest) variantNames() []string {
	var out []string
	for k := range m.Variants {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ssrPaths are the paths the server renderer renders.
func (v *variantSpec) ssrPaths() []string {
	seen := map[string]bool{}
	var out []string
	var add func(r *routeSpec)
	add = func(r *routeSpec) {
		if r == nil {
			return
		}
		if r.SSR != "" && !seen[r.SSR] {
			seen[r.SSR] = true
			out = append(out, r.SSR)
		}
		add(r.Htmx)
	}
	for _, k := range sortedKeys(v.Routes) {
		add(v.Routes[k])
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
