package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"lekta.dev/lekta/records"
)

// Members make and revoke their own API keys on /members/keys. Every post
// answers 303 to the page; what to say there travels in a flash cookie
// read once: a new key sealed under the service's secrets key and bound to
// the session (the key is stored nowhere, only its hash), or the name of a
// fixed message.

// Keys of the member pages.
const (
	// ownKeys is how many working keys a member may make.
	ownKeys     = 10
	flashCookie = "lekta_flash"
	// flashTTL is how long the page after a post has to show its flash.
	flashTTL = 60
	// flashKey starts a flash holding a sealed new key.
	flashKey = "key."
)

// flashNotes are the messages a flash cookie may name, and nothing else.
var flashNotes = map[string]struct {
	words string
	error bool
}{
	"revoked":     {"The key was revoked: it no longer works.", false},
	"label":       {fmt.Sprintf("A label is at most %d bytes long, without control or formatting characters.", records.MaxKeyLabel), true},
	"limit":       {fmt.Sprintf("You have the most working keys a member may have (%d); revoke one first.", ownKeys), true},
	"no-key":      {"You have no key with this id.", true},
	"not-shown":   {"The key was made but could not be shown: revoke it and make another.", true},
	"unavailable": {unavailableWords, true},
}

// keyRow is one of the member's keys on the page.
type keyRow struct {
	ID, Label, Created, CreatedISO string
	Revoked, RevokedISO            string
}

// keysView is what keys.html shows.
type keysView struct {
	CSRF, Email string
	// NewKey is the key just made, shown this once.
	NewKey        string
	Notice, Error string
	Keys          []keyRow
	Most          int
}

func (s *Server) keysPage(w http.ResponseWriter, r *http.Request, ss session) {
	v := keysView{CSRF: ss.csrf, Email: ss.member.Email, Most: ownKeys}
	s.readFlash(w, r, ss, &v)
	keys, err := s.cfg.Members.APIKeys(r.Context(), ss.member.ID)
	if err != nil {
		http.Error(w, unavailableWords, http.StatusServiceUnavailable)
		return
	}
	for _, k := range keys {
		row := keyRow{ID: k.ID, Label: k.Label, Created: k.CreatedAt.Format(memberTime), CreatedISO: k.CreatedAt.Format(memberTimeISO)}
		if k.Revoked() {
			row.Revoked, row.RevokedISO = k.RevokedAt.Format(memberTime), k.RevokedAt.Format(memberTimeISO)
		}
		v.Keys = append(v.Keys, row)
	}
	s.pages.renderPage(w, http.StatusOK, "keys", layout{Title: "API keys", NoIndex: true, Data: v})
}

func (s *Server) addKeyForm(w http.ResponseWriter, r *http.Request, ss session) {
	_, key, err := s.cfg.Members.AddAPIKey(r.Context(), ss.member.ID, r.PostForm.Get("label"), ownKeys, s.cfg.Now())
	switch {
	case err == nil:
		sealed, err := s.cfg.Members.SealShown(records.HashKey(ss.token), key)
		if err != nil {
			s.flash(w, r, "not-shown")
			break
		}
		s.flash(w, r, flashKey+sealed)
	case errors.Is(err, records.ErrLimit):
		s.flash(w, r, "limit")
	case errors.Is(err, records.ErrUnavailable):
		s.flash(w, r, "unavailable")
	default:
		s.flash(w, r, "label")
	}
	http.Redirect(w, r, "/members/keys", http.StatusSeeOther)
}

func (s *Server) revokeKeyForm(w http.ResponseWriter, r *http.Request, ss session) {
	err := s.cfg.Members.RevokeAPIKey(r.Context(), ss.member.ID, r.PathValue("id"), s.cfg.Now())
	switch {
	case err == nil:
		s.flash(w, r, "revoked")
	case errors.Is(err, records.ErrNotFound):
		s.flash(w, r, "no-key")
	default:
		s.flash(w, r, "unavailable")
	}
	http.Redirect(w, r, "/members/keys", http.StatusSeeOther)
}

// flashCookieOf is the flash cookie holding value (removed when maxAge is
// negative): HttpOnly, for the keys page only, or with the __Host- prefix
// and Path "/" when Secure.
func (s *Server) flashCookieOf(r *http.Request, value string, maxAge int) *http.Cookie {
	return s.memberCookie(r, flashCookie, "/members/keys", value, maxAge)
}

// flash sets what the page after this post says, once.
func (s *Server) flash(w http.ResponseWriter, r *http.Request, value string) {
	http.SetCookie(w, s.flashCookieOf(r, value, flashTTL))
}

// readFlash puts the flash of the previous post into v and removes it.
// A key is shown only when it opens for this session; a note only when
// it is one of flashNotes.
func (s *Server) readFlash(w http.ResponseWriter, r *http.Request, ss session, v *keysView) {
	c, err := r.Cookie(s.cookieName(r, flashCookie))
	if err != nil {
		return
	}
	http.SetCookie(w, s.flashCookieOf(r, "", -1))
	if sealed, ok := strings.CutPrefix(c.Value, flashKey); ok {
		key, err := s.cfg.Members.OpenShown(records.HashKey(ss.token), sealed)
		if err == nil && strings.HasPrefix(key, records.KeyPrefix) {
			v.NewKey = key
		}
		return
	}
	if note, ok := flashNotes[c.Value]; ok && note.error {
		v.Error = note.words
	} else if ok {
		v.Notice = note.words
	}
}
