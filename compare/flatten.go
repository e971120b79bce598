package compare

import (
	"bytes"
	"errors"
	"io"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// utf8BOM is the byte order mark some servers leave in front of a document.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// parseDocument parses body as HTML the way the lane's client would: with
// scripting off for the plain lane (so <noscript> content is markup) and on
// for the render lane (so it is inert text, as in the browser's DOM).
//
// golang.org/x/net/html refuses documents nested deeper than 512 elements.
// Browsers flatten such nesting instead, so on failure the document is
// re-read with start tags beyond a depth dropped; deep reports that.
func parseDocument(body []byte, scripting bool) (root *html.Node, deep bool) {
	body = bytes.TrimPrefix(body, utf8BOM)
	opt := html.ParseOptionEnableScripting(scripting)
	root, err := html.ParseWithOptions(bytes.NewReader(body), opt)
	if err == nil {
		return root, false
	}
	// The second attempt keeps nothing past its limit, for documents that
	// nest links and headings in ways the parser does not undo.
	for _, try := range []struct {
		limit int
		keep  bool
	}{{256, true}, {32, false}} {
		root, err = html.ParseWithOptions(bytes.NewReader(flatten(body, try.limit, try.keep, scripting)), opt)
		if err == nil {
			return root, true
		}
	}
	return nil, true
}

// voidElements never have an end tag, so they never nest.
var voidElements = map[atom.Atom]bool{
	atom.Area: true, atom.Base: true, atom.Br: true, atom.Col: true, atom.Embed: true,
	atom.Hr: true, atom.Img: true, atom.Input: true, atom.Link: true, atom.Meta: true,
	atom.Source: true, atom.Track: true, atom.Wbr: true, atom.Param: true,
}

// keptBeyondLimit are elements flatten keeps past its depth limit.
var keptBeyondLimit = map[atom.Atom]bool{
	atom.A: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
}

// flatten rewrites body so that no element nests deeper than limit: start
// tags that would open an element beyond it are dropped with their end tags,
// and their content stays in place. Links and headings are kept even there,
// because the parser never nests them in themselves (unless keep is false). The count is a tokenizer's estimate of the
// parser's stack; the margin below 512 absorbs elements the parser adds itself.
// It is linear in the input: the open-element stack never exceeds limit.
func flatten(body []byte, limit int, keep, scripting bool) []byte {
	out := make([]byte, 0, len(body))
	z := html.NewTokenizer(bytes.NewReader(body))
	var open []string
	// dropped and beyond count elements opened past the limit, by name,
	// that were dropped or kept, so their end tags are handled alike.
	dropped, beyond := map[string]int{}, map[string]int{}
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if !errors.Is(z.Err(), io.EOF) {
				out = append(out, z.Raw()...)
			}
			return out
		}
		raw := z.Raw()
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			// The parser ignores "/>" on HTML elements, so both open one.
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if !scripting && a == atom.Noscript && tt == html.StartTagToken {
				z.NextIsNotRawText()
			}
			if voidElements[a] {
				break
			}
			if len(open) >= limit {
				if keep && keptBeyondLimit[a] {
					beyond[string(name)]++
					break
				}
				dropped[string(name)]++
				continue
			}
			open = append(open, string(name))
		case html.EndTagToken:
			name, _ := z.TagName()
			if n := dropped[string(name)]; n > 0 {
				dropped[string(name)] = n - 1
				continue
			}
			if n := beyond[string(name)]; n > 0 {
				beyond[string(name)] = n - 1
				break
			}
			for i := len(open) - 1; i >= 0; i-- {
				if open[i] == string(name) {
					open = open[:i]
					break
				}
			}
		}
		out = append(out, raw...)
	}
}
