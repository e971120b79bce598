package compare

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A file of the site's own code, as an app writes it: a table of titles
// (every word of the heading in a longer line), a router and a template.
const shopSource = `import { html } from 'lit';
export const heads = { products: 'Our products | Kettle & Co. sells kettles and pans' };
const routes = { '/': 'home', '/products': 'products', '/old-products': 'redirect' };
export function render(route) {
  if (route === 'redirect') { window.location.replace('/products'); }
  return html` + "`" + `<header><nav><a href="/">Home</a> <a href="/products">Products</a></nav></header>
    <h1>Our products</h1>
    <p>Every kettle is repaired for free for ten years.</p>` + "`" + `;
}`

// TestCodeSourceNamesTheLine: a library's render is traced to the line of
// the site's own code that holds it — the template's heading over the
// table of titles that holds the same words, the navigation over the
// route table that quotes the same paths — and a redirect to the line
// that navigates, preferring the one that names where it came from.
func TestCodeSourceNamesTheLine(t *testing.T) {
	t.Parallel()
	src := NewCodeSource("src/shop.js")
	src.AddText(1, shopSource)
	other := NewCodeSource("src/other.js")
	other.AddText(1, "export const note = 'products are listed on the products page';")
	code := []*CodeSource{other, src}
	cases := []struct {
		name  string
		words string
		paths []string
		want  string
	}{
		{"heading", "Our products", nil, "src/shop.js:7"},
		{"paragraph", "Every kettle is repaired for free for ten years.", nil, "src/shop.js:8"},
		{"links", "Home Products", []string{"/", "/products"}, "src/shop.js:6"},
	}
	for _, tc := range cases {
		m := bestCode(code, wordKeys(tc.words), tc.paths, minFieldShare)
		if m == nil {
			t.Errorf("%s: no line", tc.name)
			continue
		}
		if got := fmt.Sprintf("%s:%d", m.src.File, m.line); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if m := bestCode(code, wordKeys("Kitchen tools that last"), nil, minFieldShare); m != nil {
		t.Errorf("words no file holds: named %s:%d", m.src.File, m.line)
	}
	if got := RedirectLine(code, "/old-products", "/products"); got == nil || *got != (SourcePos{File: "src/shop.js", Line: 5}) {
		t.Errorf("redirect: %+v, want src/shop.js line 5", got)
	}
	if got := RedirectLine(code, "/", "/about"); got != nil {
		t.Errorf("redirect to a path no code names: %+v", got)
	}
	table := NewCodeSource("src/router.js")
	table.AddText(1, "const to = { '/old-products': '/products' };\nlink('/products');\nnavigate(to['/old-products'] || '/products');")
	if got := RedirectLine([]*CodeSource{table}, "/old-products", "/products"); got == nil || got.Line != 3 {
		t.Errorf("redirect: %+v, want line 3, the one that navigates", got)
	}
}

// TestQuotedPaths: only quoted literals that start with "/" are paths,
// without their query and fragment; one after "=" is an attribute's.
func TestQuotedPaths(t *testing.T) {
	t.Parallel()
	got := quotedPaths(`go('/a?x=1'); x = "/b#top"; y = ` + "`/c/${id}`" + `; z = 'rel'; w = "/d e"; <a href="/e">; '/`)
	if want := []quotedPath{{"/a", false}, {"/b", true}, {"/e", true}}; !slices.Equal(got, want) {
		t.Errorf("quotedPaths = %v, want %v", got, want)
	}
}

// TestCodeSourceBounded: a file of endless distinct words keeps at most
// maxCodeWords of them, and a word at most maxWordLines lines.
func TestCodeSourceBounded(t *testing.T) {
	t.Parallel()
	src := NewCodeSource("big.js")
	var b strings.Builder
	for i := range maxCodeWords + 500 {
		fmt.Fprintf(&b, "w%d same\n", i)
	}
	src.AddText(1, b.String())
	if len(src.words) > maxCodeWords {
		t.Errorf("%d words kept, over %d", len(src.words), maxCodeWords)
	}
	if l := src.words[hashLower("same")]; len(l) != maxWordLines {
		t.Errorf("a repeated word kept %d lines, want %d", len(l), maxWordLines)
	}
}
