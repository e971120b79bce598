package render

import (
	"encoding/json"
	"testing"

	"lekta.dev/lekta/compare"
)

// TestDocumentCode: the code of a page's HTML is what its framework
// renders or runs — template content, inline scripts, the attributes it
// evaluates — each at its line; the text the server already shows is not.
func TestDocumentCode(t *testing.T) {
	t.Parallel()
	const page = `<!DOCTYPE html>
<html><head><title>Shop</title>
<script>
  window.greeting = 'Welcome back, dear customer';
</script>
<script src="/app.js">ignored text</script>
</head>
<body x-data="shop">
<p>Served by the server itself</p>
<template x-if="route === 'home'">
  <h1>Kitchen &amp; tools that last</h1>
</template>
<template x-if="route === 'old'"><div x-init="location.replace('/products')"></div></template>
</body></html>`
	code := documentCode("http://shop.example/old?x=1", []byte(page))
	if code.File != "/old" {
		t.Errorf("file %q, want the page's path /old", code.File)
	}
	cases := []struct {
		text string
		line int
	}{
		{"Welcome back, dear customer", 4},
		{"Kitchen & tools that last", 11},
		{"Served by the server itself", 0},
		{"ignored text", 0},
	}
	for _, tc := range cases {
		if got := code.LineOf(tc.text); got != tc.line {
			t.Errorf("%q: line %d, want %d", tc.text, got, tc.line)
		}
	}
	if got := compare.RedirectLine([]*compare.CodeSource{code}, "/old", "/products"); got == nil || got.Line != 13 {
		t.Errorf("redirect: %+v, want line 13, the x-init", got)
	}
}

// TestMapSources: the original files of a source map are indexed under
// the names a person knows, the site's own only: a library's file (under
// node_modules) and a file without content are left out.
func TestMapSources(t *testing.T) {
	t.Parallel()
	own := "export const x = 1;\nexport const title = 'Our products';\n"
	m, err := json.Marshal(map[string]any{
		"version":        3,
		"sources":        []string{"webpack://shop/./src/pages.jsx", "../node_modules/react-dom/index.js", "src/empty.js"},
		"sourcesContent": []any{own, "export const title = 'Our products';", nil},
		"mappings":       "",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := mapSources(m)
	if len(got) != 1 || got[0].File != "src/pages.jsx" {
		var names []string
		for _, c := range got {
			names = append(names, c.File)
		}
		t.Fatalf("sources %q, want only src/pages.jsx", names)
	}
	if l := got[0].LineOf("Our products"); l != 2 {
		t.Errorf("line %d, want 2", l)
	}
	if mapSources([]byte("not json")) != nil {
		t.Error("a map that is not JSON has sources")
	}
}
