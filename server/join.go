package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
)

// Joining is how people become members of this instance (lekta serve
// --members).
type Joining string

// The ways of joining.
const (
	// JoinClosed: the operator adds members (lekta members add) and hands
	// them their key. The default.
	JoinClosed Joining = "closed"
	// JoinInvite: the operator also invites people (lekta members invite),
	// with a one-time sign-in link.
	JoinInvite Joining = "invite"
	// JoinOpen: anyone may ask, on /members or POST /api/v1/members, for a
	// sign-in link, which the service e-mails (Config.Mailer).
	JoinOpen Joining = "open"
)

// DefaultSignInLinkTTL is how long a sign-in link works by default.
const DefaultSignInLinkTTL = 30 * time.Minute

// The limits on asking for sign-in links, the same whether the address is
// a member's or not: per address (compared without case) and per client,
// counted in the records database, so shared by every instance.
var (
	linksPerAddress = cache.Window{N: 3, Per: time.Hour}
	linksPerClient  = cache.Window{N: 10, Per: time.Hour}
)

// closedWords say how people become members under JoinClosed.
const closedWords = "Membership on this instance is by the operator: ask them for a key."

// linkOnItsWay is the one answer to every accepted request for a link:
// it never says whether the address was a member's.
const linkOnItsWay = "If this address can join, a sign-in link is on its way. Check your mail (and its spam folder)."

// ParseJoining reads a --members value.
func ParseJoining(s string) (Joining, error) {
	switch j := Joining(s); j {
	case JoinClosed, JoinInvite, JoinOpen:
		return j, nil
	}
	return "", fmt.Errorf("want closed, invite or open")
}

// checkJoining fills the joining defaults of cfg and checks them.
func checkJoining(cfg *Config) error {
	if cfg.Joining == "" {
		cfg.Joining = JoinClosed
	}
	if _, err := ParseJoining(string(cfg.Joining)); err != nil {
		return fmt.Errorf("joining %q: %w", cfg.Joining, err)
	}
	if cfg.SignInLinkTTL <= 0 {
		cfg.SignInLinkTTL = DefaultSignInLinkTTL
	}
	if cfg.Joining == JoinOpen && (cfg.Mailer == nil || cfg.PublicURL == "") {
		return errors.New("open joining needs a Mailer to send sign-in links and a PublicURL to write them with")
	}
	return nil
}

// joinAnswer is the API's 202 to a request for a link.
type joinAnswer struct {
	Message string `json:"message"`
}

// joinRefused is the 403 of a request for a link when joining is not open.
func (s *Server) joinRefused() *apiError {
	msg := closedWords
	if s.cfg.Joining == JoinInvite {
		msg = "Membership on this instance is by invitation: ask the operator for an invitation."
	}
	return &apiError{Status: http.StatusForbidden, Code: codeForbidden, Message: msg, outcome: codeForbidden}
}

// joinAPI is POST /api/v1/members: {"email": "…"} asks for a sign-in link.
func (s *Server) joinAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if s.cfg.Joining != JoinOpen {
			writeError(w, s.joinRefused())
			return
		}
		var in struct {
			Email string `json:"email"`
		}
		if err := readJSON(w, r, jsonBody{limit: 4 << 10, shape: "an email field"}, &in); err != nil {
			writeError(w, err)
			return
		}
		if err := s.askForLink(r.Context(), in.Email, clientAddr(r, s.cfg.TrustedProxies)); err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusAccepted, joinAnswer{Message: linkOnItsWay})
	})
}

// joinForm is POST /members/join, the form "Send me a sign-in link" of the
// sign-in page: 303 to the page saying a link is on its way, or the page
// again with the error beside the address.
func (s *Server) joinForm() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		if err := r.ParseForm(); err != nil {
			s.renderSignInPage(w, r, http.StatusBadRequest, signInView{JoinError: "The form could not be read; try again."})
			return
		}
		email := r.PostForm.Get("email")
		if !s.signinFormSent(r) {
			s.renderSignInPage(w, r, http.StatusForbidden, signInView{Email: email,
				JoinError: "The form had expired or came from another page; send it again."})
			return
		}
		if s.cfg.Joining != JoinOpen {
			s.renderSignInPage(w, r, http.StatusForbidden, signInView{})
			return
		}
		if err := s.askForLink(r.Context(), email, clientAddr(r, s.cfg.TrustedProxies)); err != nil {
			e := errorFor(err)
			e.setRetryAfter(w.Header())
			s.renderSignInPage(w, r, e.Status, signInView{Email: email, JoinError: e.Message})
			return
		}
		http.Redirect(w, r, "/members?link=sent", http.StatusSeeOther)
	})
}

// askForLink makes a sign-in link for email, adding the member when there
// is none, and mails it in the background. Whether the address was a
// member's changes neither the answer nor the limits; a revoked member
// gets no link, and the same answer.
func (s *Server) askForLink(ctx context.Context, email, client string) error {
	email = strings.TrimSpace(email)
	if err := records.CheckEmail(email); err != nil {
		return badRequest(compare.Sentence("This is not an email address that can join: " + err.Error()))
	}
	if err := s.allowLink(ctx, "client:"+clientKey(client), linksPerClient); err != nil {
		return err
	}
	if err := s.allowLink(ctx, "address:"+records.HashKey(strings.ToLower(email)), linksPerAddress); err != nil {
		return err
	}
	now := s.cfg.Now()
	m, _, err := s.cfg.Members.JoinMember(ctx, email, now)
	if err != nil {
		return memberError(err)
	}
	if m.Revoked() {
		return nil
	}
	token, err := s.cfg.Members.NewSignInLink(ctx, m.ID, now, s.cfg.SignInLinkTTL)
	if err != nil {
		return memberError(err)
	}
	s.mailLink(m, token)
	return nil
}

// allowLink counts a request for a link against w for subject, or says,
// in the same words for every subject, that there were too many.
func (s *Server) allowLink(ctx context.Context, subject string, w cache.Window) error {
	wait, err := s.cfg.Members.AllowLinkRequest(ctx, subject, w.N, w.Per, s.cfg.Now())
	switch {
	case errors.Is(err, records.ErrLimit):
		wait = max(time.Second, wait.Round(time.Second))
		return &apiError{Status: http.StatusTooManyRequests, Code: codeRateLimited, RetryAfter: wait, outcome: outcomeClientLimited,
			Message: "Too many sign-in links were asked for from here or for this address; try again in " + compare.Duration(wait) + "."}
	case err != nil:
		return memberError(err)
	}
	return nil
}

// mailLink e-mails the link in the background, so that the answer neither
// waits for the mail server nor takes longer for some addresses; Shutdown
// waits for the mails under way. A failure is logged with the member's id
// (never the token).
func (s *Server) mailLink(m records.Member, token string) {
	link := PublicLink(s.cfg.PublicURL, SignInLinkPath(token))
	body := fmt.Sprintf("Someone, hopefully you, asked for a link to sign in to the Lekta service at %s with this address.\n\n"+
		"Open this link within %s to sign in. It works once:\n\n%s\n\n"+
		"The link opens a page with a button; nothing happens until you press it.\n"+
		"If you did not ask for it, ignore this message: without the link, nothing happens.\n",
		s.cfg.PublicURL, compare.Span(s.cfg.SignInLinkTTL), link)
	s.mailing.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*smtpTimeout)
		defer cancel()
		if err := s.cfg.Mailer.Send(ctx, m.Email, "Your sign-in link for Lekta", body); err != nil {
			s.cfg.Logger.Warn("sign-in link not sent", "member", m.ID, "error", err.Error())
		}
	})
}

// waitMail waits for the mails under way, or for ctx.
func (s *Server) waitMail(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.mailing.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// SignInLinkPath is the path of the sign-in link with this token.
func SignInLinkPath(token string) string { return "/members/link?token=" + token }
