package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strings"
	"time"

	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// Cookies and lifetimes of the member pages.
const (
	sessionCookie = "lekta_session"
	signinCookie  = "lekta_signin"
	sessionTTL    = 12 * time.Hour
	maxFormBody   = 16 << 10
	trendEntries  = 30
)

// memberPageRoutes are the member pages: server-rendered, no JavaScript,
// a CSRF token in every form.
func (s *Server) memberPageRoutes(mux *http.ServeMux) {
	mux.Handle("GET /members", s.signInPage())
	mux.Handle("POST /members/sign-in", s.signIn())
	mux.Handle("POST /members/sign-out", s.memberPage(s.signOut))
	mux.Handle("GET /members/sites", s.memberPage(s.dashboard))
	mux.Handle("POST /members/sites", s.memberPage(s.addSiteForm))
	mux.Handle("GET /members/sites/{id}", s.memberPage(s.sitePage))
	mux.Handle("POST /members/sites/{id}", s.memberPage(s.changeSiteForm))
	mux.Handle("POST /members/sites/{id}/delete", s.memberPage(s.deleteSiteForm))
	mux.Handle("POST /members/sites/{id}/run", s.memberPage(s.runSiteForm))
}

// session is a signed-in member.
type session struct {
	member records.Member
	token  string
	csrf   string
}

// secureCookie reports whether the member's browser reached the service
// over https: directly, through a trusted proxy that says so in
// X-Forwarded-Proto, or as the public URL promises.
func (s *Server) secureCookie(r *http.Request) bool {
	switch {
	case r.TLS != nil, strings.HasPrefix(s.cfg.PublicURL, "https://"):
		return true
	}
	peer := parseAddr(r.RemoteAddr)
	return peer.IsValid() && inAny(peer, s.cfg.TrustedProxies) &&
		strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")
}

// sessionName is the session cookie's name: with the __Host- prefix when
// it is Secure, so that no other host or path can set or shadow it.
func (s *Server) sessionName(r *http.Request) string {
	if s.secureCookie(r) {
		return "__Host-" + sessionCookie
	}
	return sessionCookie
}

func (s *Server) signInPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie(s.sessionName(r)); err == nil {
			if _, _, err := s.cfg.Members.Session(r.Context(), c.Value, s.cfg.Now()); err == nil {
				http.Redirect(w, r, "/members/sites", http.StatusSeeOther)
				return
			}
		}
		s.renderSignIn(w, r, http.StatusOK, "")
	})
}

// renderSignIn shows the sign-in form with a fresh double-submit token.
func (s *Server) renderSignIn(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tok := rand.Text()
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: tok, Path: "/members", HttpOnly: true,
		Secure: s.secureCookie(r), SameSite: http.SameSiteLaxMode, MaxAge: 3600})
	w.Header().Set("Cache-Control", "no-store")
	s.pages.renderPage(w, status, "signin", layout{Title: "Members", NoIndex: true, Data: struct{ CSRF, Error string }{tok, msg}})
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func (s *Server) signIn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		if err := r.ParseForm(); err != nil {
			s.renderSignIn(w, r, http.StatusBadRequest, "The form could not be read; try again.")
			return
		}
		c, err := r.Cookie(signinCookie)
		if err != nil || !sameToken(c.Value, r.PostForm.Get("csrf")) {
			s.renderSignIn(w, r, http.StatusForbidden, "The form had expired or came from another page; sign in again.")
			return
		}
		m, err := s.cfg.Members.MemberByKey(r.Context(), strings.TrimSpace(r.PostForm.Get("key")))
		switch {
		case errors.Is(err, records.ErrRevoked):
			s.renderSignIn(w, r, http.StatusUnauthorized, "This key was revoked; ask the operator for a new one.")
			return
		case err != nil:
			s.renderSignIn(w, r, http.StatusUnauthorized, "This key is not valid.")
			return
		}
		token, _, err := s.cfg.Members.NewSession(r.Context(), m.ID, s.cfg.Now(), sessionTTL)
		if err != nil {
			s.renderSignIn(w, r, http.StatusServiceUnavailable, "The records database did not answer; try again in a few seconds.")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: s.sessionName(r), Value: token, Path: "/", HttpOnly: true,
			Secure: s.secureCookie(r), SameSite: http.SameSiteLaxMode, MaxAge: int(sessionTTL / time.Second)})
		http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: "", Path: "/members", MaxAge: -1})
		http.Redirect(w, r, "/members/sites", http.StatusSeeOther)
	})
}

// memberPage checks the session (and, on POST, the CSRF token) and runs h.
func (s *Server) memberPage(h func(w http.ResponseWriter, r *http.Request, ss session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		c, err := r.Cookie(s.sessionName(r))
		if err != nil {
			http.Redirect(w, r, "/members", http.StatusSeeOther)
			return
		}
		m, csrf, err := s.cfg.Members.Session(r.Context(), c.Value, s.cfg.Now())
		if err != nil {
			http.Redirect(w, r, "/members", http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
			if err := r.ParseForm(); err != nil || !sameToken(csrf, r.PostForm.Get("csrf")) {
				http.Error(w, "The form had expired or came from another page; go back, reload and try again.", http.StatusForbidden)
				return
			}
		}
		h(w, r, session{member: m, token: c.Value, csrf: csrf})
	})
}

func (s *Server) signOut(w http.ResponseWriter, r *http.Request, ss session) {
	_ = s.cfg.Members.EndSession(r.Context(), ss.token)
	http.SetCookie(w, &http.Cookie{Name: s.sessionName(r), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.secureCookie(r), SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/members", http.StatusSeeOther)
}

// siteRow is one site on the dashboard.
type siteRow struct {
	ID, URL, Schedule string
	Status            string
	RanAt, RanAtISO   string
	Verdict           string
	Trend             template.HTML
	Critical          []string
}

func (s *Server) dashboard(w http.ResponseWriter, r *http.Request, ss session) {
	s.renderDashboard(w, r, ss, http.StatusOK, "")
}

func (s *Server) renderDashboard(w http.ResponseWriter, r *http.Request, ss session, status int, msg string) {
	sites, err := s.cfg.Members.MemberSites(r.Context(), ss.member.ID)
	if err != nil {
		http.Error(w, "The records database did not answer; try again in a few seconds.", http.StatusServiceUnavailable)
		return
	}
	rows := make([]siteRow, 0, len(sites))
	for _, site := range sites {
		row := siteRow{ID: site.ID, URL: site.URL, Schedule: site.Schedule}
		es, err := s.cfg.Members.History(r.Context(), site.ID, trendEntries, time.Time{})
		if err != nil {
			http.Error(w, "The records database did not answer; try again in a few seconds.", http.StatusServiceUnavailable)
			return
		}
		if len(es) > 0 {
			e := es[0]
			row.Status, row.RanAt, row.RanAtISO = e.Status, e.RanAt.Format("2006-01-02 15:04 UTC"), e.RanAt.Format(time.RFC3339)
			row.Verdict = sharesText(e)
			row.Critical = openCritical(e)
			row.Trend = trendSVG(es)
		}
		rows = append(rows, row)
	}
	data := struct {
		Email, CSRF, Error string
		Sites              []siteRow
	}{ss.member.Email, ss.csrf, msg, rows}
	s.pages.renderPage(w, status, "dashboard", layout{Title: "Your saved sites", NoIndex: true, Data: data})
}

func sharesText(e records.Entry) string {
	if e.TextShare == nil {
		return "—"
	}
	t := fmt.Sprintf("text %d%%", int(math.Round(*e.TextShare*100)))
	if e.LinkShare != nil {
		t += fmt.Sprintf(", links %d%%", int(math.Round(*e.LinkShare*100)))
	}
	return t
}

func openCritical(e records.Entry) []string {
	var sum schedule.Summary
	_ = json.Unmarshal(e.Summary, &sum)
	var out []string
	for _, f := range sum.Findings {
		if f.Severity == "critical" {
			out = append(out, f.Code)
		}
	}
	return out
}

// trendSVG draws the text share (solid) and link share (dashed) of the
// entries, oldest on the left. Only numbers we computed reach the markup.
func trendSVG(es []records.Entry) template.HTML {
	const w, h = 120, 28
	line := func(get func(records.Entry) *float64) string {
		var pts []string
		n := len(es)
		for i := n - 1; i >= 0; i-- {
			v := get(es[i])
			if v == nil {
				continue
			}
			x := 0.0
			if n > 1 {
				x = float64(n-1-i) * w / float64(n-1)
			}
			y := h - 2 - math.Max(0, math.Min(1, *v))*(h-4)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		return strings.Join(pts, " ")
	}
	text := line(func(e records.Entry) *float64 { return e.TextShare })
	links := line(func(e records.Entry) *float64 { return e.LinkShare })
	if text == "" && links == "" {
		return ""
	}
	return template.HTML(fmt.Sprintf(`<svg class="trend" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="share seen by AI crawlers over the last re-audits">`+
		`<polyline fill="none" stroke="#1a7f37" stroke-width="1.5" points="%s"/><polyline fill="none" stroke="#0969da" stroke-width="1.5" stroke-dasharray="3 2" points="%s"/></svg>`,
		w, h, w, h, text, links))
}

func (s *Server) addSiteForm(w http.ResponseWriter, r *http.Request, ss session) {
	in := formInput(r)
	site := records.Site{MemberID: ss.member.ID}
	if err := s.checkSite(in, &site); err != nil {
		s.renderDashboard(w, r, ss, errorFor(err).Status, errorFor(err).Message)
		return
	}
	site, err := s.cfg.Members.AddSite(r.Context(), site, s.cfg.SitesPerMember, s.cfg.Now())
	if errors.Is(err, records.ErrLimit) {
		s.renderDashboard(w, r, ss, http.StatusForbidden, fmt.Sprintf("You have saved the most sites a member may (%d); remove one first.", s.cfg.SitesPerMember))
		return
	}
	if err != nil {
		s.renderDashboard(w, r, ss, http.StatusServiceUnavailable, "The records database did not answer; try again in a few seconds.")
		return
	}
	s.renderSite(w, r, ss, site, http.StatusCreated, "", site.WebhookSecret)
}

// formInput reads the site form; an empty webhook field removes the webhook.
func formInput(r *http.Request) siteInput {
	u, sch, hook := r.PostForm.Get("url"), r.PostForm.Get("schedule"), r.PostForm.Get("webhook_url")
	return siteInput{URL: &u, Schedule: &sch, WebhookURL: &hook}
}

// entryRow is one history entry on the site page.
type entryRow struct {
	RanAt, Trigger, Status, Rule, ReportID, Verdict string
	Regression                                      bool
	Changes                                         []string
}

func (s *Server) sitePage(w http.ResponseWriter, r *http.Request, ss session) {
	site, err := s.ownSite(r, ss.member)
	if err != nil {
		s.pages.renderPage(w, errorFor(err).Status, "notfound", layout{Title: "No such site", NoIndex: true,
			Data: map[string]string{"Title": "No such site", "Message": errorFor(err).Message}})
		return
	}
	s.renderSite(w, r, ss, site, http.StatusOK, "", "")
}

func (s *Server) renderSite(w http.ResponseWriter, r *http.Request, ss session, site records.Site, status int, msg, secret string) {
	es, err := s.cfg.Members.History(r.Context(), site.ID, 100, time.Time{})
	if err != nil {
		http.Error(w, "The records database did not answer; try again in a few seconds.", http.StatusServiceUnavailable)
		return
	}
	rows := make([]entryRow, 0, len(es))
	for _, e := range es {
		row := entryRow{RanAt: e.RanAt.Format("2006-01-02 15:04:05 UTC"), Trigger: e.Trigger, Status: e.Status, Rule: e.Rule,
			ReportID: e.ReportID, Verdict: sharesText(e), Regression: e.Regression, Changes: changeLines(e.Changes)}
		rows = append(rows, row)
	}
	delivery := ""
	if !site.WebhookAt.IsZero() {
		delivery = site.WebhookAt.Format("2006-01-02 15:04:05 UTC") + ": " + site.WebhookResult
	}
	data := struct {
		Site                                 records.Site
		CSRF, Error, Secret, Badge, Delivery string
		Entries                              []entryRow
	}{site, ss.csrf, msg, secret, "/badge/" + site.BadgeToken + ".svg", delivery, rows}
	s.pages.renderPage(w, status, "site", layout{Title: "Saved site", NoIndex: true, Data: data})
}

// changeLines says a stored comparison in short lines (escaped by the template).
func changeLines(raw json.RawMessage) []string {
	var c schedule.Changes
	if json.Unmarshal(raw, &c) != nil || c.First {
		return nil
	}
	clip := func(s string) string {
		if len(s) > 80 {
			return s[:77] + "…"
		}
		return s
	}
	var out []string
	out = append(out, c.Reasons...)
	for _, f := range c.Fields {
		out = append(out, fmt.Sprintf("%s %s: %q → %q", f.Lane, f.Field, clip(f.Before), clip(f.After)))
	}
	for _, f := range c.Appeared {
		out = append(out, "new finding "+f.Code)
	}
	for _, f := range c.Resolved {
		out = append(out, "resolved "+f.Code)
	}
	return out
}

func (s *Server) changeSiteForm(w http.ResponseWriter, r *http.Request, ss session) {
	site, err := s.ownSite(r, ss.member)
	if err != nil {
		http.Error(w, errorFor(err).Message, errorFor(err).Status)
		return
	}
	before := site.WebhookURL
	if err := s.checkSite(formInput(r), &site); err != nil {
		s.renderSite(w, r, ss, site, errorFor(err).Status, errorFor(err).Message, "")
		return
	}
	if err := s.cfg.Members.UpdateSite(r.Context(), site, s.cfg.Now()); err != nil {
		http.Error(w, "The records database did not answer; try again in a few seconds.", http.StatusServiceUnavailable)
		return
	}
	secret := ""
	if site.WebhookURL != before {
		secret = site.WebhookSecret
	}
	s.renderSite(w, r, ss, site, http.StatusOK, "", secret)
}

func (s *Server) deleteSiteForm(w http.ResponseWriter, r *http.Request, ss session) {
	site, err := s.ownSite(r, ss.member)
	if err != nil {
		http.Error(w, errorFor(err).Message, errorFor(err).Status)
		return
	}
	if err := s.cfg.Members.DeleteSite(r.Context(), site.ID); err != nil {
		http.Error(w, "The records database did not answer; try again in a few seconds.", http.StatusServiceUnavailable)
		return
	}
	http.Redirect(w, r, "/members/sites", http.StatusSeeOther)
}

func (s *Server) runSiteForm(w http.ResponseWriter, r *http.Request, ss session) {
	site, err := s.ownSite(r, ss.member)
	if err != nil {
		http.Error(w, errorFor(err).Message, errorFor(err).Status)
		return
	}
	if _, err := s.queueRun(r.Context(), ss.member, site); err != nil {
		s.renderSite(w, r, ss, site, errorFor(err).Status, errorFor(err).Message, "")
		return
	}
	http.Redirect(w, r, "/members/sites/"+site.ID, http.StatusSeeOther)
}

// sinceLines is the change log shown on the report page of a re-audit.
func (s *Server) sinceLines(ctx context.Context, reportID string) []string {
	if s.cfg.Members == nil {
		return nil
	}
	e, err := s.cfg.Members.EntryByReport(ctx, reportID)
	if err != nil {
		return nil
	}
	var c schedule.Changes
	if json.Unmarshal(e.Changes, &c) != nil {
		return nil
	}
	if c.First {
		return []string{"This is the first re-audit of this saved site: nothing to compare with yet."}
	}
	if lines := changeLines(e.Changes); len(lines) > 0 {
		return lines
	}
	return []string{"Nothing that change tracking follows has changed."}
}
