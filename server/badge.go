package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

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
		st := notRunYet
		if e, err := s.cfg.Members.LatestEntry(r.Context(), site.ID); err == nil {
			st = stateOf(e)
		}
		serveBadge(w, r, badgeSVG("AI crawlers", st.Words, badgeColors[st.Tone]))
	})
}

// serveBadge writes svg with a strong ETag of its bytes and no-cache, so
// that browsers and proxies ask again each time a page shows the badge
// and see a new run at once; a request whose If-None-Match matches (a
// list, a weak W/ tag or *, as http.ServeContent reads it) gets 304 with
// no body. HEAD gets the headers only.
func serveBadge(w http.ResponseWriter, r *http.Request, svg string) {
	sum := sha256.Sum256([]byte(svg))
	h := w.Header()
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
	h.Set("X-Robots-Tag", "noindex")
	// Badges are embedded in other sites' pages.
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	http.ServeContent(w, r, "", time.Time{}, strings.NewReader(svg))
}

// badgeColors are the badge's right half by the state's tone.
var badgeColors = map[string]string{toneGood: "#4c1", toneWarn: "#dfb317", toneBad: "#e05d44", toneNone: "#9f9f9f"}

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
