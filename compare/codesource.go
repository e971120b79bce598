package compare

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// Where content is written in the site's own code: when every frame of a
// write was a library's (React committing, Alpine evaluating a template),
// the site's own sources are searched for the content instead. A
// CodeSource is one file of the site's own code the render lane read for
// the audit: an original file of a source map (sourcesContent, outside
// node_modules), a script of the site's own without a map, or the page's
// HTML (its templates, inline scripts and script attributes). Like a
// DataResponse it holds word hashes and line numbers, never the text, and
// is never stored.
type CodeSource struct {
	// File is what a report names: the original file as its map names it,
	// or the path of the script or the page.
	File string
	// words are the first lines (at most maxWordLines) each word is on,
	// and lineWords how many words each line has.
	words     map[uint64][]int32
	lineWords map[int32]int32
	// paths are the lines each quoted path literal ('/products') is on,
	// and nav the lines that call a navigation (location, navigate,
	// Navigate, redirect, router.push).
	paths map[string][]int32
	nav   map[int32]struct{}
	// hrefs are the lines each path is quoted on as an attribute's value
	// (href="/products", to="/products"): a link's.
	hrefs map[string][]int32
}

// Limits of one CodeSource's index.
const (
	maxCodeWords     = 20_000
	maxWordLines     = 16
	maxCodePaths     = 2_000
	maxCodePathLines = 8
)

// NewCodeSource starts the index of a file of the site's own code.
func NewCodeSource(file string) *CodeSource {
	return &CodeSource{File: file, words: map[uint64][]int32{}, lineWords: map[int32]int32{},
		paths: map[string][]int32{}, nav: map[int32]struct{}{}, hrefs: map[string][]int32{}}
}

// codeSeparators are the bytes of code and markup that end a word: a
// word of the page is "last" where the code says "last</h1>".
var codeSeparators = strings.NewReplacer("<", " ", ">", " ", "=", " ", "{", " ", "}", " ", "(", " ", ")", " ",
	"[", " ", "]", " ", ";", " ", ",", " ", "`", " ", `"`, " ", "\\n", " ", "${", " ")

// navigates matches code that sends the browser elsewhere: a location
// assignment or call, a router's navigate, push or replace, React
// Router's <Navigate>, a route table's redirect.
var navigates = regexp.MustCompile(`location\.(replace|assign)\s*\(|location(\.href)?\s*=[^=]|\bnavigate\s*\(|<Navigate\b|\bredirect\s*:|\bredirect\s*\(|\b(router|history)\.(push|replace)(State)?\s*\(`)

// AddLine indexes one line (1-based) of the file, or a part of it: its
// words, the path literals it quotes, and whether it navigates. Lines
// come in order.
func (c *CodeSource) AddLine(line int, s string) {
	if line <= 0 || len(s) == 0 {
		return
	}
	n := int32(line)
	var w wordCounter
	w.add(codeSeparators.Replace(s))
	c.lineWords[n] += int32(w.total)
	for k := range w.keys {
		l, ok := c.words[k]
		if (ok || len(c.words) < maxCodeWords) && len(l) < maxWordLines && (len(l) == 0 || l[len(l)-1] != n) {
			c.words[k] = append(l, n)
		}
	}
	for _, p := range quotedPaths(s) {
		c.notePath(c.paths, p.path, n)
		if p.attr {
			c.notePath(c.hrefs, p.path, n)
		}
	}
	if navigates.MatchString(s) {
		c.nav[n] = struct{}{}
	}
}

// notePath keeps that line n quotes path p.
func (c *CodeSource) notePath(m map[string][]int32, p string, n int32) {
	l, ok := m[p]
	if (ok || len(m) < maxCodePaths) && len(l) < maxCodePathLines && !slices.Contains(l, n) {
		m[p] = append(l, n)
	}
}

// AddText indexes text that starts at line first, line by line.
func (c *CodeSource) AddText(first int, s string) {
	for i, l := range strings.Split(s, "\n") {
		c.AddLine(first+i, l)
	}
}

// Empty reports whether the index holds nothing.
func (c *CodeSource) Empty() bool { return len(c.words) == 0 && len(c.paths) == 0 }

// quotedPath is a path literal of a line, and whether it is an
// attribute's value (href="/products", to='/products').
type quotedPath struct {
	path string
	attr bool
}

// quotedPaths are the string literals of a line that read as paths of the
// site: '/products', "/p/7", `/about`, without their query or fragment.
func quotedPaths(s string) []quotedPath {
	var out []quotedPath
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '\'' && q != '"' && q != '`' || i+1 >= len(s) || s[i+1] != '/' {
			continue
		}
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			break
		}
		p := s[i+1 : i+1+end]
		if j := strings.IndexAny(p, "?#"); j >= 0 {
			p = p[:j]
		}
		if len(p) <= 512 && !strings.ContainsAny(p, " $") {
			out = append(out, quotedPath{path: p, attr: strings.HasSuffix(strings.TrimRight(s[:i], " "), "=")})
		}
		i += end + 1
	}
	return out
}

// codeMatch is the file of the site's own code that holds most of a set of
// words and paths, and its line that holds most of them.
type codeMatch struct {
	src   *CodeSource
	share float64
	// line is the line; n how many of the words and paths it holds, and
	// size how many words it has in all.
	line, n, size int32
}

// better reports whether m names the content more closely than o: a larger
// share of it, then a line holding more of it, then a line with fewer
// other words (the template's "<h1>Our products</h1>" over a table of
// titles).
func (m *codeMatch) better(o *codeMatch) bool {
	switch {
	case o == nil:
		return true
	case m.share != o.share:
		return m.share > o.share
	case m.n != o.n:
		return m.n > o.n
	}
	return m.size < o.size
}

// bestCode is the code source that holds the largest share of the words
// and paths (the paths of links), at its line holding most of them; nil
// when none holds least.
func bestCode(code []*CodeSource, words map[uint64]struct{}, paths []string, least float64) *codeMatch {
	total := len(words) + len(paths)
	if total == 0 {
		return nil
	}
	var best *codeMatch
	for _, src := range code {
		m := src.match(words, paths)
		if m != nil && m.share >= least && m.better(best) {
			best = m
		}
	}
	return best
}

// match is how much of the words and paths src holds, and where.
func (src *CodeSource) match(words map[uint64]struct{}, paths []string) *codeMatch {
	lines := map[int32]int32{}
	held := 0
	for k := range words {
		if ls, ok := src.words[k]; ok {
			held++
			for _, l := range ls {
				lines[l]++
			}
		}
	}
	for _, p := range paths {
		if ls, ok := src.hrefs[p]; ok {
			held++
			for _, l := range ls {
				lines[l]++
			}
		}
	}
	if held == 0 {
		return nil
	}
	m := &codeMatch{src: src, share: float64(held) / float64(len(words)+len(paths))}
	for l, n := range lines {
		size := src.lineWords[l]
		if m.line == 0 || n > m.n || n == m.n && (size < m.size || size == m.size && l < m.line) {
			m.line, m.n, m.size = l, n, size
		}
	}
	return m
}

// RedirectLine is where the site's own code (code) sends the browser from
// the path from to the path to, for a navigation no frame of the site's
// own code made: a line that quotes to and navigates, one that also quotes
// from first; nil when no file has one.
func RedirectLine(code []*CodeSource, from, to string) *SourcePos {
	type hit struct {
		src   *CodeSource
		line  int32
		score int
	}
	var hits []hit
	for _, src := range code {
		for _, l := range src.paths[to] {
			if _, ok := src.nav[l]; !ok {
				continue
			}
			score := 0
			if from != "" && slices.Contains(src.paths[from], l) {
				score = 1
			}
			hits = append(hits, hit{src, l, score})
		}
	}
	if len(hits) == 0 {
		return nil
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	return &SourcePos{File: hits[0].src.File, Line: int(hits[0].line)}
}

// LineOf is the line of the file that holds most of the words of text, 0
// when it holds none of them.
func (c *CodeSource) LineOf(text string) int {
	if m := c.match(wordKeys(text), nil); m != nil {
		return int(m.line)
	}
	return 0
}
