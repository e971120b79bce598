package server

import (
	"errors"
	"fmt"
	"html"
	"math"
	"net/http"
	"strings"

	"lekta.dev/lekta/records"
)

// badge is GET /badge/{token}.svg: a small shields-style SVG from the
// site's latest re-audit only. It never starts an audit.
func (s *Server) badge() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutSuffix(r.PathValue("file"), ".svg")
		if !ok || token == "" || len(token) > 64 {
			http.NotFound(w, r)
			return
		}
		site, err := s.cfg.Members.SiteByBadge(r.Context(), token)
		if errors.Is(err, records.ErrNotFound) {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, "The records database did not answer; try again later.", http.StatusServiceUnavailable)
			return
		}
		text, color := "not audited yet", "#9f9f9f"
		if e, err := s.cfg.Members.LatestEntry(r.Context(), site.ID); err == nil {
			text, color = badgeText(e)
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("X-Robots-Tag", "noindex")
		// Badges are embedded in other sites' pages.
		w.Header().Set("Cross-Origin-Resource-Policy", "cross-origin")
		fmt.Fprint(w, badgeSVG("AI crawlers", text, color))
	})
}

// badgeText says what the latest re-audit found, in a few words.
func badgeText(e records.Entry) (string, string) {
	switch {
	case e.Status == "skipped" && e.Rule != "":
		return "blocked by robots.txt", "#e05d44"
	case e.Status == "skipped" || e.Status == "blocked" || e.Status == "error" || e.Status == "timeout":
		return e.Status, "#e05d44"
	case strings.Contains(string(e.Summary), `"code":"robots.noindex_render_only"`):
		return "noindex only in render", "#e05d44"
	case e.TextShare != nil:
		p := int(math.Round(*e.TextShare * 100))
		color := "#4c1"
		switch {
		case p < 50:
			color = "#e05d44"
		case p < 90:
			color = "#dfb317"
		}
		return fmt.Sprintf("see %d%%", p), color
	}
	return e.Status, "#9f9f9f"
}

// badgeSVG draws "label | text" as a flat badge; widths are estimated at
// 7 px a character (Verdana 11 px).
func badgeSVG(label, text, color string) string {
	lw, tw := 10+7*len(label), 10+7*len(text)
	l, t := html.EscapeString(label), html.EscapeString(text)
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s: %s">`+
		`<title>%s: %s</title><rect width="%d" height="20" fill="#555"/><rect x="%d" width="%d" height="20" fill="%s"/>`+
		`<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">`+
		`<text x="%d" y="14">%s</text><text x="%d" y="14">%s</text></g></svg>`,
		lw+tw, l, t, l, t, lw, lw, tw, color, lw/2, l, lw+tw/2, t)
}
