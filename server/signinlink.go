package server

import (
	"crypto/rand"
	"errors"
	"net/http"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
)

// signInView is what signin.html shows: the key form, and below it how
// people join this instance (the form asking for a link under JoinOpen).
type signInView struct {
	CSRF string
	// Error is beside the key field.
	Error   string
	Joining string
	// Email is the address as typed in the join form; JoinError is beside it.
	Email, JoinError string
	// Sent: a link was asked for; the page says one may be on its way.
	Sent    bool
	LinkTTL string
}

// renderSignInPage shows the sign-in page with a fresh double-submit
// token, which both its forms carry.
func (s *Server) renderSignInPage(w http.ResponseWriter, r *http.Request, status int, v signInView) {
	v.CSRF = rand.Text()
	v.Joining, v.LinkTTL = string(s.cfg.Joining), compare.Span(s.cfg.SignInLinkTTL)
	v.Sent = status == http.StatusOK && r.Method == http.MethodGet && r.URL.Query().Get("link") == "sent"
	http.SetCookie(w, s.signinFormCookie(r, v.CSRF, 3600))
	w.Header().Set("Cache-Control", "no-store")
	s.pages.renderPage(w, status, "signin", layout{Title: "Members", NoIndex: true, Data: v})
}

// linkView is what link.html shows: the button that uses a sign-in link,
// or why the link cannot sign anyone in.
type linkView struct {
	// Token and CSRF are the confirmation form's, set while the link works.
	Token, CSRF, Email string
	// Title and Message say why the link does not work.
	Title, Message string
	Joining        string
}

// linkPage is GET /members/link?token=…: a page with a button, so that a
// mail scanner fetching the link does not use it up.
func (s *Server) linkPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.URL.Query().Get("token")
		if s.linksOff(w, r) {
			return
		}
		m, err := s.cfg.Members.SignInLink(r.Context(), token, s.cfg.Now())
		if err != nil {
			s.renderLinkError(w, r, err)
			return
		}
		v := linkView{Token: token, CSRF: rand.Text(), Email: m.Email}
		http.SetCookie(w, s.signinFormCookie(r, v.CSRF, 3600))
		s.renderLink(w, r, http.StatusOK, v)
	})
}

// useLink is POST /members/link: it uses the link, once, starts a session
// and answers 303 to the dashboard.
func (s *Server) useLink() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		if s.linksOff(w, r) {
			return
		}
		if err := r.ParseForm(); err != nil {
			s.renderLink(w, r, http.StatusBadRequest, linkView{Title: "The form could not be read",
				Message: "Open the link from your e-mail again."})
			return
		}
		if !s.signinFormSent(r) {
			s.renderLink(w, r, http.StatusForbidden, linkView{Title: "The form had expired",
				Message: "The form had expired or came from another page: open the link from your e-mail again. It still works."})
			return
		}
		m, err := s.cfg.Members.UseSignInLink(r.Context(), r.PostForm.Get("token"), s.cfg.Now())
		if err == nil {
			err = s.startSession(w, r, m.ID)
		}
		if err != nil {
			s.renderLinkError(w, r, err)
			return
		}
		http.Redirect(w, r, "/members/sites", http.StatusSeeOther)
	})
}

// linksOff shows, under JoinClosed, that sign-in links do not work here,
// and reports whether it did.
func (s *Server) linksOff(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Joining != JoinClosed {
		return false
	}
	s.renderLink(w, r, http.StatusForbidden, linkView{Title: "Sign-in links are off", Message: closedWords})
	return true
}

// renderLinkError says why a link signs no one in.
func (s *Server) renderLinkError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, records.ErrRevoked):
		s.renderLink(w, r, http.StatusForbidden, linkView{Title: "This membership was revoked",
			Message: "The operator revoked the membership of this address, so the link does not sign in."})
	case errors.Is(err, records.ErrNotFound):
		s.renderLink(w, r, http.StatusGone, linkView{Title: "This sign-in link does not work",
			Message: "The link has expired, was used already, or is not a sign-in link of this service.", Joining: string(s.cfg.Joining)})
	default:
		s.renderLink(w, r, http.StatusServiceUnavailable, linkView{Title: "Try again in a few seconds",
			Message: "The records database did not answer; open the link again in a few seconds."})
	}
}

// renderLink shows link.html, never stored by a cache.
func (s *Server) renderLink(w http.ResponseWriter, _ *http.Request, status int, v linkView) {
	w.Header().Set("Cache-Control", "no-store")
	s.pages.renderPage(w, status, "link", layout{Title: "Sign in", NoIndex: true, Data: v})
}

// startSession signs the member in on this browser: a session cookie
// (HttpOnly, SameSite=Lax, Secure and __Host- behind TLS) for sessionTTL,
// and the sign-in form's cookie removed.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, memberID string) error {
	token, _, err := s.cfg.Members.NewSession(r.Context(), memberID, s.cfg.Now(), sessionTTL)
	if err != nil {
		return err
	}
	http.SetCookie(w, s.memberCookie(r, sessionCookie, "/", token, int(sessionTTL/time.Second)))
	http.SetCookie(w, s.signinFormCookie(r, "", -1))
	return nil
}
