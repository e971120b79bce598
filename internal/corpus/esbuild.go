package corpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// bundle builds one browser bundle into public and returns its address.
func bundle(src, public string, bs bundleSpec) (string, error) {
	opts := baseOptions(src, bs)
	opts.Platform = api.PlatformBrowser
	opts.Target = api.ES2020
	opts.Format = api.FormatESModule
	if bs.Format == "iife" {
		opts.Format = api.FormatIIFE
	}
	opts.Outdir = public
	opts.EntryPointsAdvanced = []api.EntryPoint{{InputPath: bs.Entry, OutputPath: bs.Name}}
	if bs.Hash {
		opts.EntryNames = "[dir]/[name]-[hash]"
	}
	if !bs.NoMinify {
		opts.MinifyWhitespace, opts.MinifyIdentifiers, opts.MinifySyntax = true, true, true
	}
	switch bs.Sourcemap {
	case "", "linked":
		opts.Sourcemap = api.SourceMapLinked
	case "inline":
		opts.Sourcemap = api.SourceMapInline
	case "none":
	default:
		return "", fmt.Errorf("bundle %s: sourcemap %q", bs.Entry, bs.Sourcemap)
	}
	opts.Plugins = append(opts.Plugins, svelteImports(src, "client"))
	if len(bs.Globals) > 0 {
		opts.Plugins = append(opts.Plugins, globals(bs.Globals))
	}
	res := api.Build(opts)
	if err := buildErr(bs.Entry, res); err != nil {
		return "", err
	}
	var meta struct {
		Outputs map[string]struct {
			EntryPoint string `json:"entryPoint"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(res.Metafile), &meta); err != nil {
		return "", err
	}
	for out, o := range meta.Outputs {
		if o.EntryPoint != "" && strings.HasSuffix(out, ".js") {
			rel, err := filepath.Rel(public, filepath.Join(src, out))
			if err != nil {
				return "", err
			}
			return "/" + filepath.ToSlash(rel), nil
		}
	}
	return "", fmt.Errorf("bundle %s: no output", bs.Entry)
}

// serverBundle builds the variant's server renderer for Node, as one ES
// module with a require() for the packages written as CommonJS.
func serverBundle(src string, spec *variantSpec, outfile string) error {
	bs := bundleSpec{Entry: spec.Server, Alias: spec.ServerAlias}
	if len(spec.Bundles) > 0 {
		first := spec.Bundles[0]
		bs.JSX, bs.ImportSource, bs.Factory, bs.Fragment, bs.Define = first.JSX, first.ImportSource, first.Factory, first.Fragment, first.Define
	}
	opts := baseOptions(src, bs)
	opts.Platform = api.PlatformNode
	opts.Target = api.ESNext
	opts.Format = api.FormatESModule
	opts.EntryPoints = []string{spec.Server}
	opts.Outfile = outfile
	opts.Banner = map[string]string{"js": "import { createRequire as __lektaRequire } from 'node:module'; const require = __lektaRequire(import.meta.url);"}
	opts.Plugins = append(opts.Plugins, svelteImports(src, "server"))
	return buildErr(spec.Server, api.Build(opts))
}

// baseOptions are the options every bundle shares.
func baseOptions(src string, bs bundleSpec) api.BuildOptions {
	define := map[string]string{"process.env.NODE_ENV": `"production"`}
	for k, v := range bs.Define {
		define[k] = v
	}
	opts := api.BuildOptions{
		AbsWorkingDir:    src,
		Bundle:           true,
		Write:            true,
		Metafile:         true,
		PreserveSymlinks: true,
		LogLevel:         api.LogLevelSilent,
		Define:           define,
		Alias:            bs.Alias,
		Loader:           map[string]api.Loader{".html": api.LoaderText, ".js": api.LoaderJSX},
		JSX:              api.JSXAutomatic,
		JSXImportSource:  bs.ImportSource,
		LegalComments:    api.LegalCommentsNone,
	}
	if bs.JSX == "classic" {
		opts.JSX, opts.JSXFactory, opts.JSXFragment = api.JSXTransform, bs.Factory, bs.Fragment
	}
	return opts
}

// buildErr turns esbuild's messages into one error.
func buildErr(entry string, res api.BuildResult) error {
	if len(res.Errors) == 0 {
		return nil
	}
	var errs []error
	for _, m := range res.Errors {
		where := ""
		if m.Location != nil {
			where = fmt.Sprintf("%s:%d:%d: ", m.Location.File, m.Location.Line, m.Location.Column)
		}
		errs = append(errs, errors.New(where+m.Text))
	}
	return fmt.Errorf("bundle %s: %w", entry, errors.Join(errs...))
}

// globals makes the listed imports read a global variable, for apps that
// load a framework's UMD build with a script tag of its own.
func globals(m map[string]string) api.Plugin {
	var names []string
	for k := range m {
		names = append(names, regexp.QuoteMeta(k))
	}
	filter := "^(" + strings.Join(names, "|") + ")$"
	return api.Plugin{Name: "globals", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: filter}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			return api.OnResolveResult{Path: a.Path, Namespace: "global"}, nil
		})
		b.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: "global"}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
			js := "module.exports = globalThis[" + fmt.Sprintf("%q", m[a.Path]) + "];"
			return api.OnLoadResult{Contents: &js, Loader: api.LoaderJS}, nil
		})
	}}
}

// svelteImports sends imports of .svelte files to their compiled output
// for target ("client" or "server"), which compileSvelte made.
func svelteImports(src, target string) api.Plugin {
	compiled := filepath.Join(src, ".svelte", target)
	sources := filepath.Join(src, "src")
	return api.Plugin{Name: "svelte", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: `\.svelte$`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			abs := filepath.Join(a.ResolveDir, a.Path)
			rel, err := filepath.Rel(sources, abs)
			if err != nil || strings.HasPrefix(rel, "..") {
				// An import between compiled files: the same tree.
				if rel, err = filepath.Rel(compiled, abs); err != nil || strings.HasPrefix(rel, "..") {
					return api.OnResolveResult{}, fmt.Errorf("%s is outside the app", a.Path)
				}
			}
			return api.OnResolveResult{Path: filepath.Join(compiled, rel+".js")}, nil
		})
		// A compiled component's other relative imports are the sources'.
		b.OnResolve(api.OnResolveOptions{Filter: `^\.\.?/`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			dir, err := filepath.Rel(compiled, a.ResolveDir)
			if err != nil || strings.HasPrefix(dir, "..") || strings.HasSuffix(a.Path, ".svelte") {
				return api.OnResolveResult{}, nil
			}
			return api.OnResolveResult{Path: filepath.Join(sources, dir, a.Path)}, nil
		})
	}}
}
