package server

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
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
// a CSRF token in every form, and every post refused unless it comes from
// the service's own pages (memberOrigins).
func (s *Server) memberPageRoutes(mux *http.ServeMux) {
	own := s.memberOrigins()
	handle := func(pattern string, h http.Handler) { mux.Handle(pattern, own.Handler(h)) }
	handle("GET /members", s.signInPage())
	handle("POST /members/sign-in", s.signIn())
	handle("POST /members/join", s.joinForm())
	handle("GET /members/link", s.linkPage())
	handle("POST /members/link", s.useLink())
	handle("GET /members/keys", s.memberPage(s.keysPage))
	handle("POST /members/keys", s.memberPage(s.addKeyForm))
	handle("POST /members/keys/{id}/revoke", s.memberPage(s.revokeKeyForm))
	handle("POST /members/sign-out", s.memberPage(s.signOut))
	handle("GET /members/sites", s.memberPage(s.dashboard))
	handle("POST /members/sites", s.memberPage(s.addSiteForm))
	handle("GET /members/sites/{id}", s.memberPage(s.sitePage))
	handle("POST /members/sites/{id}", s.memberPage(s.changeSiteForm))
	handle("GET /members/sites/{id}/delete", s.memberPage(s.removePage))
	handle("POST /members/sites/{id}/delete", s.memberPage(s.deleteSiteForm))
	handle("POST /members/sites/{id}/run", s.memberPage(s.runSiteForm))
}

// memberOrigins refuses, with 403, a member form posted from another site.
// The browser says where a post comes from (Sec-Fetch-Site, else Origin);
// only the service's own origin may post: the host the request was sent
// to, or the public URL's origin when a proxy changes the host. The token
// in each form is not enough on its own: a sign-in cookie can be planted
// by a sibling host or over plain http, and a form sent elsewhere with the
// same token would pass. Gets are never refused; none of them changes
// anything.
func (s *Server) memberOrigins() *http.CrossOriginProtection {
	own := http.NewCrossOriginProtection()
	if o := publicOrigin(s.cfg.PublicURL); o != "" {
		// New checked the public URL, so the origin is well formed.
		_ = own.AddTrustedOrigin(o)
	}
	own.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "This form was sent from another site, so it was refused. "+
			"Open the member pages at this service's own address and try again.", http.StatusForbidden)
	}))
	return own
}

// publicOrigin is the origin of publicURL as a browser writes it in
// Origin (scheme and host in lower case, no default port), "" when there
// is no public URL.
func publicOrigin(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	host = strings.TrimSuffix(host, map[string]string{"http": ":80", "https": ":443"}[scheme])
	return scheme + "://" + host
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

// cookieName is name with the __Host- prefix when the cookie is Secure,
// so that no other host or path can set or shadow it.
func (s *Server) cookieName(r *http.Request, name string) string {
	if s.secureCookie(r) {
		return "__Host-" + name
	}
	return name
}

// sessionName is the session cookie's name.
func (s *Server) sessionName(r *http.Request) string { return s.cookieName(r, sessionCookie) }

// memberCookie is a cookie of the member pages named name for path,
// holding value (removed when maxAge is negative): HttpOnly and
// SameSite=Lax; when Secure it is named with the __Host- prefix, which
// requires Path "/".
func (s *Server) memberCookie(r *http.Request, name, path, value string, maxAge int) *http.Cookie {
	c := &http.Cookie{Name: s.cookieName(r, name), Value: value, Path: path, HttpOnly: true,
		Secure: s.secureCookie(r), SameSite: http.SameSiteLaxMode, MaxAge: maxAge}
	if c.Secure {
		c.Path = "/"
	}
	return c
}

// signinFormCookie is the sign-in form's double-submit cookie holding
// value (removed when maxAge is negative).
func (s *Server) signinFormCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return s.memberCookie(r, signinCookie, "/members", value, maxAge)
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

// renderSignIn shows the sign-in form with a fresh double-submit token
// and msg beside the key field.
func (s *Server) renderSignIn(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.renderSignInPage(w, r, status, signInView{Error: msg})
}

// unavailableWords say, on the member pages, that the records database did
// not answer.
const unavailableWords = "The records database did not answer; try again in a few seconds."

// signinFormSent reports whether a posted form of the sign-in pages
// carries the token of the double-submit cookie those pages set.
func (s *Server) signinFormSent(r *http.Request) bool {
	c, err := r.Cookie(s.cookieName(r, signinCookie))
	return err == nil && sameToken(c.Value, r.PostForm.Get("csrf"))
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
		if !s.signinFormSent(r) {
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
		if err := s.startSession(w, r, m.ID); err != nil {
			s.renderSignIn(w, r, http.StatusServiceUnavailable, unavailableWords)
			return
		}
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
	http.SetCookie(w, s.memberCookie(r, sessionCookie, "/", "", -1))
	http.Redirect(w, r, "/members", http.StatusSeeOther)
}

// addSiteForm saves a new site and answers 303 to its page, which shows
// the webhook secret once; a URL the member saved already answers 303 to
// that site's page, with a note. A refusal shows the form again, at this
// address: nothing was saved.
func (s *Server) addSiteForm(w http.ResponseWriter, r *http.Request, ss session) {
	in := formInput(r)
	site := records.Site{MemberID: ss.member.ID}
	if err := s.checkSite(in, &site); err != nil {
		s.renderDashboard(w, r, ss, errorFor(err).Status, s.formError(in, err))
		return
	}
	saved, err := s.cfg.Members.AddSite(r.Context(), site, s.cfg.SitesPerMember, s.cfg.Now())
	var ex *records.SiteExistsError
	switch {
	case errors.As(err, &ex):
		s.leaveNote(w, r, ex.ID, noteSaved)
		http.Redirect(w, r, "/members/sites/"+ex.ID, http.StatusSeeOther)
		return
	case err != nil:
		form := s.newSiteForm(deref(in.URL), deref(in.Schedule), deref(in.WebhookURL))
		status := http.StatusServiceUnavailable
		form.Error = unavailableWords
		if errors.Is(err, records.ErrLimit) {
			status = http.StatusForbidden
			form.Error = fmt.Sprintf("You have saved the most sites a member may (%d); remove one first.", s.cfg.SitesPerMember)
		}
		s.renderDashboard(w, r, ss, status, form)
		return
	}
	if saved.WebhookURL != "" {
		s.leaveNote(w, r, saved.ID, noteSecret)
	}
	http.Redirect(w, r, "/members/sites/"+saved.ID, http.StatusSeeOther)
}

// formInput reads the site form; an empty webhook field removes the webhook.
func formInput(r *http.Request) siteInput {
	u, sch, hook := r.PostForm.Get("url"), r.PostForm.Get("schedule"), r.PostForm.Get("webhook_url")
	return siteInput{URL: &u, Schedule: &sch, WebhookURL: &hook}
}

// siteFormOf is the change form of a saved site.
func (s *Server) siteFormOf(site records.Site) siteForm {
	return s.newSiteForm(site.URL, site.Schedule, site.WebhookURL)
}

// sitePage is a saved site's page, with the note a form's redirect left
// for it: the webhook secret, shown once, or that the URL was saved
// already.
func (s *Server) sitePage(w http.ResponseWriter, r *http.Request, ss session) {
	site, err := s.ownSite(r, ss.member)
	if err != nil {
		s.noSitePage(w, err)
		return
	}
	form, secret := s.siteFormOf(site), ""
	switch s.takeNote(w, r, site.ID) {
	case noteSecret:
		if site.WebhookURL != "" {
			secret = site.WebhookSecret
		}
	case noteSaved:
		form.Note = savedWords
	}
	s.renderSite(w, r, ss, site, http.StatusOK, form, secret)
}

// noSitePage says why a site's page cannot be shown: no such site, or
// another member's.
func (s *Server) noSitePage(w http.ResponseWriter, err error) {
	s.pages.renderPage(w, errorFor(err).Status, "notfound", layout{Title: "No such site", NoIndex: true,
		Data: map[string]string{"Title": "No such site", "Message": errorFor(err).Message}})
}

// changeSiteForm saves a site's changes and answers 303 to its page, which
// shows a new webhook secret once. A refusal, such as a URL the member
// saved as another site (409), shows the form again at this address.
func (s *Server) changeSiteForm(w http.ResponseWriter, r *http.Request, ss session) {
	site, err := s.ownSite(r, ss.member)
	if err != nil {
		http.Error(w, errorFor(err).Message, errorFor(err).Status)
		return
	}
	before, saved := site.WebhookURL, site
	in := formInput(r)
	if err := s.checkSite(in, &site); err != nil {
		s.renderSite(w, r, ss, saved, errorFor(err).Status, s.formError(in, err), "")
		return
	}
	err = s.cfg.Members.UpdateSite(r.Context(), site, s.cfg.Now())
	if ex := (*records.SiteExistsError)(nil); errors.As(err, &ex) {
		words := "You already saved " + ex.URL + " as another site; change that one, or choose another address."
		refusal := &fieldError{field: "url", words: words, err: &apiError{Status: http.StatusConflict, Code: codeSaved, Message: words}}
		s.renderSite(w, r, ss, saved, http.StatusConflict, s.formError(in, refusal), "")
		return
	}
	if err != nil {
		http.Error(w, unavailableWords, http.StatusServiceUnavailable)
		return
	}
	if site.WebhookURL != before && site.WebhookURL != "" {
		s.leaveNote(w, r, site.ID, noteSecret)
	}
	http.Redirect(w, r, "/members/sites/"+site.ID, http.StatusSeeOther)
}

// removePage is GET /members/sites/{id}/delete: what removing the site
// takes with it, the form that removes it, and a way back. It changes
// nothing.
func (s *Server) removePage(w http.ResponseWriter, r *http.Request, ss session) {
	site, err := s.ownSite(r, ss.member)
	if err != nil {
		s.noSitePage(w, err)
		return
	}
	n, err := s.cfg.Members.HistoryCount(r.Context(), site.ID)
	if err != nil {
		http.Error(w, unavailableWords, http.StatusServiceUnavailable)
		return
	}
	data := struct {
		Site          records.Site
		CSRF, History string
	}{site, ss.csrf, ""}
	if n > 0 {
		data.History = compare.Plural(n, "history entry", "history entries")
	}
	s.pages.renderPage(w, http.StatusOK, "confirm", layout{Title: "Remove a saved site", NoIndex: true, Data: data})
}

// deleteSiteForm removes the site and its history, then answers 303 to
// the dashboard.
func (s *Server) deleteSiteForm(w http.ResponseWriter, r *http.Request, ss session) {
	site, err := s.ownSite(r, ss.member)
	if err != nil {
		http.Error(w, errorFor(err).Message, errorFor(err).Status)
		return
	}
	if err := s.cfg.Members.DeleteSite(r.Context(), site.ID); err != nil {
		http.Error(w, unavailableWords, http.StatusServiceUnavailable)
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
		form := s.siteFormOf(site)
		form.Error = errorFor(err).Message
		s.renderSite(w, r, ss, site, errorFor(err).Status, form, "")
		return
	}
	http.Redirect(w, r, "/members/sites/"+site.ID, http.StatusSeeOther)
}
