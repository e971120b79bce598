package compare

import (
	"fmt"
	"strings"
	"testing"
)

// benchPage generates a realistic page of about size bytes: a head with
// metadata and JSON-LD, then sections of headings, paragraphs, links, images
// and inline scripts.
func benchPage(size int) []byte {
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Benchmark page</title>
<meta name="description" content="A generated page for benchmarks."><link rel="canonical" href="/bench">
<meta property="og:title" content="Benchmark"><script type="application/ld+json">{"@type":"WebPage"}</script></head><body>`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `<section><h2>Section %d about kettles</h2><p>Paragraph %d: every kettle in this shop is shaped, fired and glazed in our own workshop by hand, and Grüße to the potters of Köln. <a href="/products/%d">Product %d</a> and <a href="https://example.org/r/%d" rel="nofollow">review</a>.</p>
<img src="/img/%d.jpg" alt="Kettle %d"><ul><li>Stoneware</li><li>1.5 litres</li><li><em>Dishwasher</em> safe</li></ul><script>window.x%d = %d;</script></section>
`, i, i, i, i, i%50, i, i, i, i)
	}
	b.WriteString(`</body></html>`)
	return []byte(b.String())
}

// BenchmarkExtract measures extraction throughput on 1 MB and 5 MB pages.
func BenchmarkExtract(b *testing.B) {
	for _, size := range []int{1 << 20, 5 << 20} {
		body := benchPage(size)
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			s := snap(LanePlain, "")
			s.Body = body
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if p := Extract(s); p.WordCount == 0 {
					b.Fatal("no words extracted")
				}
			}
		})
	}
}

// BenchmarkParse measures the HTML parser alone on the same pages, the floor
// for BenchmarkExtract.
func BenchmarkParse(b *testing.B) {
	for _, size := range []int{1 << 20, 5 << 20} {
		body := benchPage(size)
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if root, _ := parseDocument(body, false); root == nil {
					b.Fatal("no document")
				}
			}
		})
	}
}

// BenchmarkDiff measures Diff on the extracts of two 1 MB pages that differ
// in a tenth of their sections.
func BenchmarkDiff(b *testing.B) {
	body := benchPage(1 << 20)
	plain := snap(LanePlain, string(body))
	render := snap(LaneRender, strings.ReplaceAll(string(body), "Section 1", "Rendered section 1"))
	render.Render = &RenderDetails{Settled: true}
	po := &Observed{Snapshot: plain, Page: Extract(plain)}
	ro := &Observed{Snapshot: render, Page: Extract(render)}
	b.ReportAllocs()
	for b.Loop() {
		if res := Diff(po, ro); len(res.Diff) == 0 {
			b.Fatal("no rows")
		}
	}
}

// BenchmarkExtractAndCheck measures Extract plus the page checks of both
// lanes on the 1 MB and 5 MB pages (one page handed to both lanes), the
// figure whose ratio to BenchmarkExtract is the checks' cost.
func BenchmarkExtractAndCheck(b *testing.B) {
	for _, size := range []int{1 << 20, 5 << 20} {
		body := benchPage(size)
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			s := snap(LanePlain, "")
			s.Body = body
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				p := Extract(s)
				o := &Observed{Snapshot: s, Page: p}
				d := &differ{p: observe(o), r: observe(o)}
				var l findingList
				d.checkFindings(&l)
				if p.WordCount == 0 {
					b.Fatal("no words extracted")
				}
			}
		})
	}
}

// BenchmarkChecks measures the page checks of both lanes alone on the
// extracts of the 1 MB and 5 MB pages; its time over BenchmarkExtract's is
// the checks' share of extraction time.
func BenchmarkChecks(b *testing.B) {
	for _, size := range []int{1 << 20, 5 << 20} {
		s := snap(LanePlain, "")
		s.Body = benchPage(size)
		o := &Observed{Snapshot: s, Page: Extract(s)}
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(s.Body)))
			b.ReportAllocs()
			for b.Loop() {
				d := &differ{p: observe(o), r: observe(o)}
				var l findingList
				d.checkFindings(&l)
			}
		})
	}
}
