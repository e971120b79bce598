package render

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/net/html"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/plainget"
)

// The proxy reads the bodies it relays for the causes (causes.go): a data
// response (JSON, an HTML fragment, text) is indexed for the content only
// the rendered page has, and a script is read for its library signature
// and its source map. Nothing of a body is kept past the audit or put in
// a report: the index holds word hashes and URLs, a script its map.
const (
	// maxReadBody bounds the bytes read of one body, as sent and decoded.
	maxReadBody = 5 << 20
	// maxReadBodies bounds the bodies one audit reads, each kind.
	maxReadBodies = 32
)

// bodyKind says what the proxy reads of a response.
type bodyKind int

const (
	bodyNone bodyKind = iota
	bodyJSON
	bodyHTML
	bodyText
	bodyScript
	// bodyDocument is a page's HTML, read for the code it holds.
	bodyDocument
)

// kindOf is what to read of a response of this Content-Type.
func kindOf(contentType string) bodyKind {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return bodyJSON
	case mt == "text/html":
		return bodyHTML
	case mt == "text/plain":
		return bodyText
	case strings.HasSuffix(mt, "javascript") || strings.HasSuffix(mt, "ecmascript"):
		return bodyScript
	}
	return bodyNone
}

// headerMove is a response header that tells a page to go elsewhere
// (htmx's HX-Redirect and HX-Location, Refresh), with its response.
type headerMove struct {
	url, header, value string
}

// bodyBook is what one audit's proxy read of the bodies it relayed.
type bodyBook struct {
	mu      sync.Mutex
	wg      sync.WaitGroup
	data    []*compare.DataResponse
	scripts map[string]*scriptBody
	// docs are the page HTML documents read, by URL: their templates,
	// inline scripts and script attributes (documentCode).
	docs    map[string]*compare.CodeSource
	moves   []headerMove
	reading int
	// off: the audit names no causes (Options.NoCauses); nothing is read.
	off bool
}

// scriptBody is what the proxy read of a script.
type scriptBody struct {
	// library is the library the script's name or banner says it is.
	library string
	// mapURL is its source map's URL (a data: URL inline), "" for none.
	mapURL string
	// code is the index of a script of the site's own (no library's)
	// without a source map, for content no frame of the site's own code
	// wrote; nil otherwise.
	code *compare.CodeSource
}

// moveHeaders are the response headers a headerMove notes.
var moveHeaders = []string{"HX-Redirect", "HX-Location", "Refresh"}

// watch notes what the rules read of a forwarded response: its move
// headers, and a tee of its body when it is one the causes read.
func (b *bodyBook) watch(resp *http.Response, rawURL string) {
	if b.off || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return
	}
	if navigation(resp.Request.Header) {
		if kindOf(resp.Header.Get("Content-Type")) == bodyHTML {
			b.tee(resp, rawURL, bodyDocument)
		}
		return
	}
	for _, h := range moveHeaders {
		if v := resp.Header.Get(h); v != "" {
			b.mu.Lock()
			if len(b.moves) < maxReadBodies {
				b.moves = append(b.moves, headerMove{url: rawURL, header: h, value: pageString(v)})
			}
			b.mu.Unlock()
		}
	}
	kind := kindOf(resp.Header.Get("Content-Type"))
	if kind == bodyNone || strings.HasSuffix(resp.Request.URL.Path, ".map") {
		return
	}
	b.tee(resp, rawURL, kind)
}

// tee reads the body of a response the causes read, as it is relayed.
func (b *bodyBook) tee(resp *http.Response, rawURL string, kind bodyKind) {
	b.mu.Lock()
	if b.reading >= 2*maxReadBodies {
		b.mu.Unlock()
		return
	}
	b.reading++
	b.wg.Add(1)
	b.mu.Unlock()
	header := resp.Header.Clone()
	resp.Body = &teeBody{ReadCloser: resp.Body, done: func(body []byte, whole bool) {
		defer b.wg.Done()
		if whole {
			b.read(rawURL, kind, header, body)
		}
	}}
}

// read indexes one whole body.
func (b *bodyBook) read(rawURL string, kind bodyKind, header http.Header, body []byte) {
	r, err := plainget.Decoded(&http.Response{Header: header, Body: io.NopCloser(bytes.NewReader(body))})
	if err != nil {
		return
	}
	body, err = io.ReadAll(io.LimitReader(r, maxReadBody+1))
	if err != nil || len(body) > maxReadBody {
		return
	}
	switch kind {
	case bodyDocument:
		code := documentCode(rawURL, body)
		b.mu.Lock()
		if b.docs == nil {
			b.docs = map[string]*compare.CodeSource{}
		}
		if len(b.docs) < maxReadBodies {
			b.docs[rawURL] = code
		}
		b.mu.Unlock()
		return
	case bodyScript:
		s := &scriptBody{library: scriptLibrary(rawURL, body), mapURL: sourceMapURL(rawURL, header, body)}
		if s.library == "" && s.mapURL == "" {
			// A script with a map is read through its map's originals.
			s.code = compare.NewCodeSource(pathOf(rawURL))
			s.code.AddText(1, string(body))
		}
		b.mu.Lock()
		if b.scripts == nil {
			b.scripts = map[string]*scriptBody{}
		}
		if len(b.scripts) < maxReadBodies {
			b.scripts[rawURL] = s
		}
		b.mu.Unlock()
		return
	}
	d := compare.NewDataResponse(rawURL)
	switch kind {
	case bodyJSON:
		indexJSON(d, body)
	case bodyHTML:
		indexHTML(d, body)
	default:
		d.AddText(string(body))
	}
	if d.Empty() {
		return
	}
	b.mu.Lock()
	if len(b.data) < maxReadBodies {
		b.data = append(b.data, d)
	}
	b.mu.Unlock()
}

// indexJSON indexes the string values of a JSON body (not its keys), and
// its numbers as words.
func indexJSON(d *compare.DataResponse, body []byte) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	// open holds, per open container, whether it is an object expecting a
	// key next ("obj" containers alternate key, value).
	type open struct{ obj, wantKey bool }
	var stack []open
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if n := len(stack); n > 0 && stack[n-1].obj {
					stack[n-1].wantKey = false
				}
				stack = append(stack, open{obj: v == '{', wantKey: v == '{'})
			default:
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
				stack[n-1].wantKey = false
				continue
			}
			d.AddText(v)
			valueDone()
		default:
			if n, ok := v.(json.Number); ok {
				d.AddText(n.String())
			}
			valueDone()
		}
	}
}

// indexHTML indexes the text and links of an HTML fragment.
func indexHTML(d *compare.DataResponse, body []byte) {
	z := html.NewTokenizer(bytes.NewReader(body))
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.TextToken:
			if skip == 0 {
				d.AddText(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			if string(name) == "script" || string(name) == "style" {
				skip++
			}
			ldJSON := false
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch string(k) {
				case "href", "src":
					d.AddURL(string(v))
				case "content", "alt", "title":
					d.AddText(string(v))
				case "type":
					ldJSON = string(name) == "script" && strings.EqualFold(strings.TrimSpace(string(v)), "application/ld+json")
				}
			}
			if ldJSON && z.Next() == html.TextToken {
				// Structured data a fragment brings is data too.
				indexJSON(d, z.Text())
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); (string(name) == "script" || string(name) == "style") && skip > 0 {
				skip--
			}
		}
	}
}

// teeBody keeps a copy of the first maxReadBody bytes of a body and hands
// it over once, whole (read to its end) or not.
type teeBody struct {
	io.ReadCloser
	buf  bytes.Buffer
	over bool
	once sync.Once
	done func(body []byte, whole bool)
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 && !t.over {
		if t.buf.Len()+n > maxReadBody {
			t.over = true
			t.buf = bytes.Buffer{}
		} else {
			t.buf.Write(p[:n])
		}
	}
	if err == io.EOF {
		t.once.Do(func() { go t.done(t.buf.Bytes(), !t.over) })
	}
	return n, err
}

func (t *teeBody) Close() error {
	t.once.Do(func() { t.done(nil, false) })
	return t.ReadCloser.Close()
}

// wait waits for the bodies being read.
func (b *bodyBook) wait() { b.wg.Wait() }

// documentCode indexes the code a page's HTML holds (compare.CodeSource):
// the text and attributes inside its <template> elements, its inline
// scripts, and the attributes a framework evaluates (x-, v-, :, @, hx-,
// on…), each at its line of the document.
func documentCode(rawURL string, body []byte) *compare.CodeSource {
	code := compare.NewCodeSource(pathOf(rawURL))
	z := html.NewTokenizer(bytes.NewReader(body))
	line, templates, script := 1, 0, false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return code
		}
		start := line
		line += bytes.Count(z.Raw(), []byte("\n"))
		switch tt {
		case html.TextToken:
			if templates > 0 || script {
				code.AddText(start, string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			tag := string(name)
			external := false
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				if string(k) == "src" && tag == "script" {
					external = true
				}
				if templates > 0 || scriptAttribute(string(k)) {
					code.AddLine(start, string(v))
				}
			}
			switch {
			case tag == "template" && tt == html.StartTagToken:
				templates++
			case tag == "script" && tt == html.StartTagToken:
				script = !external
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "template":
				templates = max(templates-1, 0)
			case "script":
				script = false
			}
		}
	}
}

// scriptAttribute reports whether a framework evaluates the attribute as
// code: Alpine's x-, Vue's v-, : and @, htmx's hx-, event handlers.
func scriptAttribute(name string) bool {
	for _, p := range []string{"x-", "v-", ":", "@", "hx-", "on"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
