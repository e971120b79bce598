package main

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The docsify kind is a docs single-page app: index.html loads docsify,
// which fetches README.md and _sidebar.md with XHR and renders them. Its
// pages are committed here; docsify itself comes from the npm registry
// through `make bench-assets` (pinned, integrity-checked, never committed).

// docsifyPages are the docs site's own pages.
//
//go:embed docsify-site/index.html docsify-site/README.md docsify-site/_sidebar.md docsify-site/guide.md
var docsifyPages embed.FS

// docsifyAssets are the files `make bench-assets` writes into -assets/docsify.
var docsifyAssets = []string{"docsify.min.js", "vue.css"}

// docsifyPath is where the test site serves the docs site.
const docsifyPath = "/delayed/docsify/"

// docsifyTitle is the title docsify gives the home route: the text of the
// sidebar link that is active (docsify's getAndActive sets document.title
// to the link's title, which it first fills with the link's text). The
// `name` option only labels the sidebar.
const docsifyTitle = "Lekta Test Shop docs"

// writeDocsifySite writes the docs site — its pages and docsify's files
// from assets — into a new temporary directory, which the caller removes.
func writeDocsifySite(assets string) (string, error) {
	dir, err := os.MkdirTemp("", "lekta-bench-docsify-")
	if err != nil {
		return "", err
	}
	if err := fillDocsifySite(dir, assets); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

func fillDocsifySite(dir, assets string) error {
	pages, _ := fs.Sub(docsifyPages, "docsify-site")
	if err := os.CopyFS(dir, pages); err != nil {
		return fmt.Errorf("write docsify pages: %w", err)
	}
	for _, name := range docsifyAssets {
		b, err := os.ReadFile(filepath.Join(assets, "docsify", name))
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("-assets %s has no docsify/%s: run `make bench-assets`", assets, name)
		}
		if err != nil {
			return fmt.Errorf("read docsify asset: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("write docsify asset: %w", err)
		}
	}
	return nil
}
