package server

import (
	"fmt"
	"html/template"
	"strings"

	"lekta.dev/lekta/records"
)

// Geometry of the dashboard's trend chart, in px: the plot sits between
// the scale on the left and the last value's label on the right.
const (
	trendW, trendH     = 168, 40
	trendLeft, trendX1 = 30, 134
	trendTop, trendBot = 6, 34
)

// trendSVG draws the share of the text (solid) and of the links (dashed)
// AI crawlers saw over the entries (newest first), oldest on the left, on a
// 0–100% scale, with the last value labelled. A run without a share leaves
// a gap; a single run is a dot. Only numbers we computed reach the markup.
func trendSVG(es []records.Entry) template.HTML {
	n := len(es)
	x := func(i int) float64 { // i counts from the oldest
		if n == 1 {
			return trendX1
		}
		return trendLeft + float64(i)*(trendX1-trendLeft)/float64(n-1)
	}
	y := func(v float64) float64 { return trendBot - float64(percent(v))/100*(trendBot-trendTop) }
	type point struct{ x, y float64 }
	series := func(get func(records.Entry) *float64) []point {
		var pts []point
		for i := n - 1; i >= 0; i-- {
			if v := get(es[i]); v != nil {
				pts = append(pts, point{x(n - 1 - i), y(*v)})
			}
		}
		return pts
	}
	text := series(func(e records.Entry) *float64 { t, _ := sharesOf(e); return t })
	links := series(func(e records.Entry) *float64 { _, l := sharesOf(e); return l })
	if len(text) == 0 && len(links) == 0 {
		return ""
	}
	var b strings.Builder
	label := "Last run: no share"
	lastText, lastLinks := sharesOf(es[0])
	if lastText != nil {
		label = "Last run: " + strings.TrimSuffix(sharesSentence(lastText, lastLinks), ".")
	}
	fmt.Fprintf(&b, `<svg class="trend" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s, over the last %d runs">`,
		trendW, trendH, trendW, trendH, label, n)
	fmt.Fprintf(&b, `<g font-size="8" fill="#57606a" font-family="sans-serif" text-anchor="end"><text x="%d" y="%d">100%%</text><text x="%d" y="%d">0%%</text></g>`,
		trendLeft-4, trendTop+3, trendLeft-4, trendBot+3)
	fmt.Fprintf(&b, `<path d="M%d %dH%d M%d %dH%d" stroke="#d0d7de" stroke-width="1"/>`,
		trendLeft, trendTop, trendX1, trendLeft, trendBot, trendX1)
	draw := func(pts []point, color, dash string) {
		if len(pts) == 0 {
			return
		}
		var ps []string
		for _, p := range pts {
			ps = append(ps, fmt.Sprintf("%.1f,%.1f", p.x, p.y))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"/>`, color, dash, strings.Join(ps, " "))
		last := pts[len(pts)-1]
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`, last.x, last.y, color)
	}
	draw(links, "#0969da", ` stroke-dasharray="3 2"`)
	draw(text, "#1a7f37", "")
	if lastText != nil {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="10" font-family="sans-serif" fill="#1f2328">%d%%</text>`,
			trendX1+5, y(*lastText)+3.5, percent(*lastText))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
