package audit

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/plainget"
)

// bombSize is how much a decoding bomb expands to: far beyond the plain
// lane's cap, so reading it whole would show in the heap.
const bombSize = 256 << 20

// bombPrefix starts every bomb, so the part the lane reads is a page.
const bombPrefix = "<!DOCTYPE html><html><head><title>bomb</title></head><body><h1>bomb</h1><p>"

var bombs = struct {
	sync.Once
	body map[string][]byte
}{}

// bomb returns a body in coding ("gzip", "deflate" or "br") that decodes to
// bombPrefix and then zeros, bombSize bytes in all. It is built from one
// compressed megabyte of zeros repeated: after the first megabyte, the
// window holds only zeros, so the same compressed blocks decode to zeros
// wherever they stand.
func bomb(coding string) []byte {
	bombs.Do(func() {
		const chunk = 1 << 20
		first := make([]byte, chunk)
		copy(first, bombPrefix)
		zeros := make([]byte, chunk)
		repeat := func(head, body, tail []byte) []byte {
			out := append([]byte(nil), head...)
			for range bombSize/chunk - 1 {
				out = append(out, body...)
			}
			return append(out, tail...)
		}
		// Raw deflate: each Flush ends byte-aligned.
		var fb bytes.Buffer
		fw, _ := flate.NewWriter(&fb, flate.BestCompression)
		fw.Write(first)
		fw.Flush()
		a := bytes.Clone(fb.Bytes())
		fw.Write(zeros)
		fw.Flush()
		b := bytes.Clone(fb.Bytes()[len(a):])
		fw.Close()
		raw := repeat(a, b, fb.Bytes()[len(a)+len(b):])

		crc := crc32.ChecksumIEEE(first)
		for range bombSize/chunk - 1 {
			crc = crc32.Update(crc, crc32.IEEETable, zeros)
		}
		gz := append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, raw...)
		gz = binary.LittleEndian.AppendUint32(gz, crc)
		gz = binary.LittleEndian.AppendUint32(gz, bombSize)

		// Adler-32 over the zeros that follow the first chunk: s1 stays,
		// s2 grows by s1 per byte.
		ad := adler32.Checksum(first)
		s1, s2 := uint64(ad&0xffff), uint64(ad>>16)
		s2 = (s2 + s1*uint64(bombSize-chunk)) % 65521
		zl := append([]byte{0x78, 0xda}, raw...)
		zl = binary.BigEndian.AppendUint32(zl, uint32(s2<<16|s1))

		var bb bytes.Buffer
		bw := brotli.NewWriterLevel(&bb, 5)
		bw.Write(first)
		bw.Flush()
		ba := bytes.Clone(bb.Bytes())
		bw.Write(zeros)
		bw.Flush()
		bbody := bytes.Clone(bb.Bytes()[len(ba):])
		bw.Close()
		br := repeat(ba, bbody, bb.Bytes()[len(ba)+len(bbody):])

		bombs.body = map[string][]byte{"gzip": gz, "deflate": zl, "br": br}
	})
	return bombs.body[coding]
}

// handlePlainHostiles adds the hostile responses of the plain-lane tests.
func (h *hostileEnv) handlePlainHostiles(tb testing.TB) {
	tb.Helper()
	site := h.site
	for _, coding := range []string{"gzip", "deflate", "br"} {
		body := bomb(coding)
		site.Handle("/hostile/bomb/"+coding, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Encoding", coding)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body)
		}))
	}
	site.Handle("/hostile/big", http.HandlerFunc(serveBig))
	site.Handle("/hostile/header-bomb", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := strings.Repeat("x", 1000)
		for i := range 100 { // 100 KiB of headers
			w.Header().Set(fmt.Sprintf("X-Bomb-%03d", i), v)
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<title>header bomb</title>")
	}))
	site.Handle("/hostile/slow-headers", http.HandlerFunc(serveSlowHeaders))
	site.Handle("/hostile/trickle", http.HandlerFunc(serveTrickle))
	site.Handle("/hostile/nested", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		open, close := r.URL.Query().Get("open"), r.URL.Query().Get("close")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html><html><head><title>nested</title></head><body><h1>nested</h1>")
		io.WriteString(w, strings.Repeat(open, n)+"deep text"+strings.Repeat(close, n))
		io.WriteString(w, "<p>after the nesting</p></body></html>")
	}))
	for _, f := range []struct{ path, file, ctype string }{
		{"/hostile/type/text-plain", "ok.html", "text/plain; charset=utf-8"},
		{"/hostile/type/none", "ok.html", ""},
		{"/hostile/type/octet-stream", "ok.html", "application/octet-stream"},
		{"/hostile/type/pdf", "document.pdf", "application/pdf"},
		{"/hostile/type/png", "image.png", "image/png"},
		{"/hostile/type/pdf-untyped", "document.pdf", ""},
		{"/hostile/type/png-as-html", "image.png", "text/html"},
		{"/hostile/cs/shift_jis", "shift_jis.html", "text/html; charset=Shift_JIS"},
		{"/hostile/cs/shift_jis-meta", "shift_jis.html", "text/html"},
		{"/hostile/cs/windows-1252", "windows-1252.html", "text/html; charset=iso-8859-1"},
		{"/hostile/cs/utf16le-bom", "utf16le-bom.html", "text/html; charset=windows-1252"},
		{"/hostile/cs/bogus", "bogus-charset.html", "text/html; charset=x-no-such-charset"},
		{"/hostile/cs/invalid-utf8", "invalid-utf8.html", "text/html; charset=utf-8"},
		{"/hostile/cs/replacement", "ok.html", "text/html; charset=iso-2022-kr"},
		{"/hostile/cs/meta-utf16", "meta-utf16.html", "text/html"},
		{"/hostile/tag-soup", "tag-soup.html", "text/html"},
	} {
		h.serveFile(tb, f.path, f.file, f.ctype)
	}
}

// bigSize is the size of /hostile/big: past the plain lane's 15 MB cap and
// just under the render lane's 50 MiB budget.
const bigSize = 50_000_000

// serveBig sends a 50 MB page, with Content-Length unless ?chunked.
func serveBig(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if _, chunked := r.URL.Query()["chunked"]; !chunked {
		w.Header().Set("Content-Length", strconv.Itoa(bigSize))
	}
	head := "<!DOCTYPE html><html><head><title>big</title></head><body><h1>big</h1><div hidden>"
	line := strings.Repeat("lorem ipsum dolor sit amet consectetur adipiscing elit\n", 1200)
	left := bigSize - len(head)
	io.WriteString(w, head)
	for left > 0 {
		n := min(left, len(line))
		if _, err := io.WriteString(w, line[:n]); err != nil {
			return // the lane stopped reading
		}
		left -= n
	}
}

// serveSlowHeaders is slowloris in reverse: a status line, then one header
// line every 200 ms until the client gives up.
func serveSlowHeaders(w http.ResponseWriter, r *http.Request) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	buf.WriteString("HTTP/1.1 200 OK\r\n")
	for i := 0; ; i++ {
		buf.WriteString("X-Slow-" + strconv.Itoa(i) + ": y\r\n")
		if buf.Flush() != nil {
			return
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
}

// serveTrickle promises a megabyte and sends one byte every 100 ms.
func serveTrickle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(1<<20))
	rc := http.NewResponseController(w)
	io.WriteString(w, "<!DOCTYPE html><html><head><title>trickle</title></head><body><p>")
	for {
		if _, err := io.WriteString(w, "x"); err != nil || rc.Flush() != nil {
			return
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
}

// heapSampler records the largest HeapInuse seen while it runs.
type heapSampler struct {
	stop chan struct{}
	done chan uint64
}

func sampleHeap() *heapSampler {
	s := &heapSampler{stop: make(chan struct{}), done: make(chan uint64)}
	go func() {
		var peak uint64
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-s.stop:
				s.done <- peak
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return s
}

func (s *heapSampler) peak() uint64 {
	close(s.stop)
	return <-s.done
}

// heapInuse is HeapInuse after a collection.
func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestHostilePlainResponses audits responses that attack the plain lane:
// decoding bombs and 50 MB bodies (read up to the cap, lane truncated, the
// heap flat), a header bomb (a clear error at 64 KiB), headers and bodies
// that trickle (ended by the lane's share of the deadline), documents that
// are not HTML or say so wrongly (the lane says what it got), charsets
// (decoded, or replaced, never invalid UTF-8), and pathological markup
// (parsed within bounds).
func TestHostilePlainResponses(t *testing.T) {
	// A short deadline bounds the trickling responses; every other case
	// finishes well within it.
	h := mustHostile(t, hostileOptions{config: func(c *Config) { c.Timeout = 6 * time.Second }})
	h.handlePlainHostiles(t)
	tests := []struct {
		name, path string
		// memory: measure the heap around the audit.
		memory bool
		check  func(t *testing.T, r *Report)
		// peak, when set, bounds the heap in use during the audit.
		peak uint64
	}{
		{"gzip bomb", "/hostile/bomb/gzip", true, truncatedPage("bomb"), bombSize},
		{"deflate bomb", "/hostile/bomb/deflate", true, truncatedPage("bomb"), bombSize},
		{"brotli bomb", "/hostile/bomb/br", true, truncatedPage("bomb"), bombSize},
		{"50 MB with Content-Length", "/hostile/big", true, truncatedPage("big"), 0},
		{"50 MB chunked", "/hostile/big?chunked", true, truncatedPage("big"), 0},
		{"header bomb", "/hostile/header-bomb", false, plainFailed(OutcomeError, "server response headers exceeded 65536 bytes"), 0},
		{"slow headers", "/hostile/slow-headers", false, plainFailed(OutcomeTimeout, ""), 0},
		{"trickled body", "/hostile/trickle", false, plainFailed(OutcomeTimeout, ""), 0},
		{"HTML as text/plain", "/hostile/type/text-plain", false, notHTML("text/plain"), 0},
		{"no Content-Type", "/hostile/type/none", false, plainTitle("ok"), 0},
		{"HTML as octet-stream", "/hostile/type/octet-stream", false, notHTML("application/octet-stream"), 0},
		{"PDF", "/hostile/type/pdf", false, notHTML("application/pdf"), 0},
		{"PNG", "/hostile/type/png", false, notHTML("image/png"), 0},
		{"PDF without Content-Type", "/hostile/type/pdf-untyped", false, notHTML("application/pdf"), 0},
		{"PNG labelled text/html", "/hostile/type/png-as-html", false, plainTitle(""), 0},
		{"Shift_JIS by header", "/hostile/cs/shift_jis", false, bothTitles("日本語のページ"), 0},
		{"Shift_JIS by meta", "/hostile/cs/shift_jis-meta", false, bothTitles("日本語のページ"), 0},
		{"windows-1252 labelled iso-8859-1", "/hostile/cs/windows-1252", false, bothTitles("Café “naïve” – 5 €"), 0},
		{"UTF-16 with BOM against the header", "/hostile/cs/utf16le-bom", false, bothTitles("Grüße aus UTF-16 ✓"), 0},
		{"bogus charset labels", "/hostile/cs/bogus", false, plainTitle("Déjà vu"), 0},
		{"invalid UTF-8", "/hostile/cs/invalid-utf8", false, plainTitleHas("broken \uFFFD", " bytes"), 0},
		{"replacement encoding label", "/hostile/cs/replacement", false, plainTitle(""), 0},
		{"meta charset utf-16", "/hostile/cs/meta-utf16", false, bothTitles("Ünïcödé meta says utf-16"), 0},
		{"100,000 nested divs", "/hostile/nested?n=100000&open=%3Cdiv%3E&close=%3C/div%3E", false, deepPage, 0},
		{"100,000 nested formatting elements", "/hostile/nested?n=100000&open=%3Cb%3E&close=%3C/b%3E", false, deepPage, 0},
		{"100,000 unclosed tables", "/hostile/nested?n=100000&open=%3Ctable%3E%3Ctr%3E%3Ctd%3E", false, deepPage, 0},
		{"tag soup", "/hostile/tag-soup", false, tagSoup, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before uint64
			var s *heapSampler
			if tc.memory {
				before = heapInuse()
				s = sampleHeap()
			}
			r := h.auditURL(t, "http://shop.example"+tc.path)
			if tc.memory {
				peak, after := s.peak(), heapInuse()
				t.Logf("heap in use: %d MiB before, peak %d MiB, %d MiB after", before>>20, peak>>20, after>>20)
				if after > before+64<<20 {
					t.Errorf("the heap grew by %d MiB", (after-before)>>20)
				}
				// Reading a bomb whole would take at least its decoded size.
				if tc.peak > 0 && peak > tc.peak {
					t.Errorf("the heap reached %d MiB during the audit, more than %d MiB", peak>>20, tc.peak>>20)
				}
			}
			t.Logf("%s", describe(r))
			tc.check(t, r)
			h.canary.CheckZero(t)
		})
	}
}

// truncatedPage: the plain lane read the cap, said so, and extracted the page.
func truncatedPage(title string) func(*testing.T, *Report) {
	return func(t *testing.T, r *Report) {
		t.Helper()
		p := r.Lanes.Plain
		if !r.Status.Ran() || p.Outcome != OutcomeOK {
			t.Fatalf("want the plain lane to finish: %s", describe(r))
		}
		if !p.Truncated || p.Bytes != plainget.DefaultMaxBody {
			t.Errorf("plain lane: truncated %v after %d bytes, want the cap of %d", p.Truncated, p.Bytes, plainget.DefaultMaxBody)
		}
		if _, ok := laneFinding(r, compare.CodePlainTruncated, compare.LanePlain); !ok {
			t.Errorf("no %s finding", compare.CodePlainTruncated)
		}
		if p.Page == nil || p.Page.Title != title {
			t.Errorf("plain page: want title %q, got %+v", title, p.Page)
		}
	}
}

// plainFailed: the plain lane ended with outcome, its error saying want,
// and the report has the lane's finding.
func plainFailed(outcome Outcome, want string) func(*testing.T, *Report) {
	return func(t *testing.T, r *Report) {
		t.Helper()
		p := r.Lanes.Plain
		if p.Outcome != outcome || !strings.Contains(p.Error, want) {
			t.Fatalf("plain lane: want %s saying %q: %s", outcome, want, describe(r))
		}
		if _, ok := laneFinding(r, "lane."+string(outcome), compare.LanePlain); !ok {
			t.Errorf("no lane.%s finding for the plain lane", outcome)
		}
		if p.Page != nil {
			t.Errorf("a failed lane has a page: %+v", p.Page)
		}
	}
}

// notHTML: the plain lane says what it got and extracts nothing.
func notHTML(ctype string) func(*testing.T, *Report) {
	return func(t *testing.T, r *Report) {
		t.Helper()
		p := r.Lanes.Plain
		if p.Outcome != OutcomeOK || p.ContentType != ctype {
			t.Fatalf("plain lane: want %s, got: %s (content type %q)", ctype, describe(r), p.ContentType)
		}
		if p.Page != nil {
			t.Errorf("plain lane extracted a page from %s: %+v", ctype, p.Page)
		}
		f, ok := laneFinding(r, compare.CodePlainNotHTML, compare.LanePlain)
		if !ok || !strings.Contains(f.Message, ctype) {
			t.Errorf("no %s finding naming %s: %+v", compare.CodePlainNotHTML, ctype, r.Findings)
		}
	}
}

// plainTitle: the plain lane finished with an HTML page titled title.
func plainTitle(title string) func(*testing.T, *Report) {
	return func(t *testing.T, r *Report) {
		t.Helper()
		if p := r.Lanes.Plain; p.Outcome != OutcomeOK || p.Page == nil || p.Page.Title != title {
			t.Fatalf("plain lane: want a page titled %q: %s; page %+v", title, describe(r), p.Page)
		}
	}
}

// plainTitleHas: the plain page's title contains each part.
func plainTitleHas(parts ...string) func(*testing.T, *Report) {
	return func(t *testing.T, r *Report) {
		t.Helper()
		p := r.Lanes.Plain
		if p.Outcome != OutcomeOK || p.Page == nil {
			t.Fatalf("plain lane: want a page: %s", describe(r))
		}
		for _, s := range parts {
			if !strings.Contains(p.Page.Title, s) {
				t.Errorf("plain title %q lacks %q", p.Page.Title, s)
			}
		}
	}
}

// bothTitles: both lanes decoded the title to the same text.
func bothTitles(title string) func(*testing.T, *Report) {
	return func(t *testing.T, r *Report) {
		t.Helper()
		plainTitle(title)(t, r)
		if rp := r.Lanes.Render.Page; rp == nil || rp.Title != title {
			t.Errorf("render lane: want the title %q: %+v", title, rp)
		}
	}
}

// deepPage: the document was parsed within bounds, flattened, and said so.
func deepPage(t *testing.T, r *Report) {
	t.Helper()
	plainTitle("nested")(t, r)
	if !r.Lanes.Plain.Page.DeepNesting {
		t.Errorf("plain page not marked as deeply nested")
	}
	if !hasFinding(r, compare.CodeHTMLTooDeep) {
		t.Errorf("no %s finding", compare.CodeHTMLTooDeep)
	}
}

// tagSoup: broken markup is read as browsers read it.
func tagSoup(t *testing.T, r *Report) {
	t.Helper()
	plainTitle("tag <b>soup")(t, r)
	if r.Status != StatusComplete {
		t.Errorf("want a complete report: %s", describe(r))
	}
}
