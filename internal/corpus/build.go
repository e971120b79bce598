package corpus

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed js/driver.mjs
var driverJS string

//go:embed js/svelte.mjs
var svelteJS string

// builder makes one build of the corpus into out.
type builder struct {
	root    string // testdata/corpus
	out     string
	modules string // the node_modules folder of the pinned packages
	node    string
	data    map[string][]byte // testdata/corpus/data, by file name
}

// all builds every app.
func (b *builder) all(ctx context.Context) error {
	if err := os.MkdirAll(b.out, 0o755); err != nil {
		return err
	}
	for name, s := range map[string]string{"driver.mjs": driverJS, "svelte.mjs": svelteJS} {
		if err := os.WriteFile(filepath.Join(b.out, name), []byte(s), 0o644); err != nil {
			return err
		}
	}
	ents, err := os.ReadDir(filepath.Join(b.root, "data"))
	if err != nil {
		return err
	}
	b.data = map[string][]byte{}
	for _, e := range ents {
		if b.data[e.Name()], err = os.ReadFile(filepath.Join(b.root, "data", e.Name())); err != nil {
			return err
		}
	}
	names, err := appNames(b.root)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := b.app(ctx, name); err != nil {
			return fmt.Errorf("build %s: %w", name, err)
		}
	}
	return nil
}

// app builds one app: its sources are copied next to a node_modules link,
// so that source maps name them as src/…, as a site's own build does.
func (b *builder) app(ctx context.Context, name string) error {
	m, err := readManifest(b.root, name)
	if err != nil {
		return err
	}
	src := filepath.Join(b.out, name, "app")
	if err := copyTree(filepath.Join(b.root, "apps", name), src); err != nil {
		return err
	}
	if err := os.Symlink(b.modules, filepath.Join(src, "node_modules")); err != nil {
		return err
	}
	if err := b.compileSvelte(ctx, src); err != nil {
		return err
	}
	for _, vn := range m.variantNames() {
		if err := b.variant(ctx, name, vn, m.Variants[vn], src); err != nil {
			return fmt.Errorf("%s: %w", vn, err)
		}
	}
	return nil
}

// compileSvelte runs Svelte's compiler over the app's .svelte files, when
// it has any, into src/.svelte/{client,server}.
func (b *builder) compileSvelte(ctx context.Context, src string) error {
	found := false
	filepath.WalkDir(filepath.Join(src, "src"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".svelte") {
			found = true
		}
		return err
	})
	if !found {
		return nil
	}
	compiler := filepath.Join(b.modules, "svelte", "src", "compiler", "index.js")
	_, err := b.runNode(ctx, nil, filepath.Join(b.out, "svelte.mjs"), compiler, filepath.Join(src, "src"), filepath.Join(src, ".svelte"))
	if err != nil {
		return fmt.Errorf("compile .svelte files: %w", err)
	}
	return nil
}

// variant builds one variant: its bundles, its files, its server
// renderer's pages, and the routes that answer.
func (b *builder) variant(ctx context.Context, app, vn string, spec *variantSpec, src string) error {
	vdir := filepath.Join(b.out, app, vn)
	public := filepath.Join(vdir, "public")
	assets := map[string]string{}
	for _, bs := range spec.Bundles {
		out, err := bundle(src, public, bs)
		if err != nil {
			return err
		}
		assets[bs.key()] = out
	}
	for to, from := range spec.Vendor {
		if err := copyFile(filepath.Join(b.modules, filepath.FromSlash(from)), filepath.Join(public, filepath.FromSlash(to))); err != nil {
			return fmt.Errorf("vendor %s: %w", to, err)
		}
	}
	subst := assetReplacer(assets)
	if spec.Public != "" {
		if err := copyTreeWith(filepath.Join(src, spec.Public), public, subst); err != nil {
			return err
		}
	}
	for name, data := range b.data {
		if err := os.MkdirAll(filepath.Join(public, "api"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(public, "api", name), data, 0o644); err != nil {
			return err
		}
	}
	pages, err := b.serverRender(ctx, app, vn, spec, src, assets)
	if err != nil {
		return err
	}
	routes := map[string]*Route{}
	for path, rs := range spec.Routes {
		if routes[path], err = builtRoute(rs, src, pages, subst); err != nil {
			return fmt.Errorf("route %s: %w", path, err)
		}
	}
	out, err := json.Marshal(struct {
		Routes map[string]*Route `json:"routes"`
		Assets map[string]string `json:"assets"`
	}{routes, assets})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(vdir, "routes.json"), out, 0o644)
}

// ssrPage is what the server renderer answered for one path.
type ssrPage struct {
	Path   string `json:"path"`
	Status int    `json:"status"`
	HTML   string `json:"html"`
}

// serverRender bundles the variant's server renderer and runs it with
// Node over every path its routes name.
func (b *builder) serverRender(ctx context.Context, app, vn string, spec *variantSpec, src string, assets map[string]string) (map[string]ssrPage, error) {
	if spec.Server == "" {
		return nil, nil
	}
	bundleFile := filepath.Join(src, ".server-"+vn+".mjs")
	if err := serverBundle(src, spec, bundleFile); err != nil {
		return nil, err
	}
	data := map[string]json.RawMessage{}
	for name, raw := range b.data {
		var v map[string]json.RawMessage
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("data %s: %w", name, err)
		}
		if products, ok := v["products"]; ok {
			data["products"] = products
		} else {
			data[strings.TrimSuffix(name, ".json")] = raw
		}
	}
	in, err := json.Marshal(map[string]any{
		"origin": "http://" + app + "-" + vn + ".example", "assets": assets, "data": data, "routes": spec.ssrPaths(),
	})
	if err != nil {
		return nil, err
	}
	out, err := b.runNode(ctx, in, filepath.Join(b.out, "driver.mjs"), bundleFile)
	if err != nil {
		return nil, fmt.Errorf("server render: %w", err)
	}
	var list []ssrPage
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("server render: %w", err)
	}
	pages := map[string]ssrPage{}
	for _, p := range list {
		pages[p.Path] = p
	}
	return pages, nil
}

// runNode runs a Node script with stdin and returns its standard output.
func (b *builder) runNode(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.node, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node %s: %w: %s", filepath.Base(args[0]), err, lastLines(stderr.String(), 20))
	}
	return stdout.Bytes(), nil
}

// lastLines is the end of a tool's output, for an error.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// builtRoute turns one route of app.json into its answer.
func builtRoute(rs *routeSpec, src string, pages map[string]ssrPage, subst *strings.Replacer) (*Route, error) {
	if rs == nil {
		return nil, nil
	}
	r := &Route{Status: rs.Status, Headers: rs.Headers, Redirect: rs.Redirect}
	switch {
	case rs.SSR != "":
		p, ok := pages[rs.SSR]
		if !ok {
			return nil, fmt.Errorf("the server renderer did not render %s", rs.SSR)
		}
		r.Body = p.HTML
		if r.Status == 0 {
			r.Status = p.Status
		}
	case rs.File != "":
		b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rs.File)))
		if err != nil {
			return nil, err
		}
		r.Body = subst.Replace(string(b))
	case rs.Redirect != "" && r.Status == 0:
		r.Status = 301
	}
	if r.Status == 0 {
		r.Status = 200
	}
	var err error
	r.Htmx, err = builtRoute(rs.Htmx, src, pages, subst)
	return r, err
}

// assetReplacer replaces __ASSET_key__ with each bundle's address.
func assetReplacer(assets map[string]string) *strings.Replacer {
	var pairs []string
	for k, v := range assets {
		pairs = append(pairs, "__ASSET_"+k+"__", v)
	}
	return strings.NewReplacer(pairs...)
}

// copyTree copies the folder from to to.
func copyTree(from, to string) error { return copyTreeWith(from, to, nil) }

// copyTreeWith copies a folder, passing HTML files through subst.
func copyTreeWith(from, to string, subst *strings.Replacer) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if d.Name() == ExpectFile {
			return nil
		}
		if subst == nil || !strings.HasSuffix(p, ".html") {
			return copyFile(p, target)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, []byte(subst.Replace(string(b))), 0o644)
	})
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
