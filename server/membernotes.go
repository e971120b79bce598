package server

import (
	"net/http"
	"strings"
	"time"
)

// A note is what a site page says once, on the GET after a form's 303: the
// webhook secret just set, or that the URL saved again was this site's.
const (
	noteCookie = "lekta_note"
	noteTTL    = 5 * time.Minute
	// noteSecret shows the site's webhook secret.
	noteSecret = "secret"
	// noteSaved says the member saved this site's URL already.
	noteSaved = "saved"
)

// savedWords is the note of noteSaved: a fixed sentence, never the input.
const savedWords = "You already saved this URL; here it is. Nothing was changed: its schedule and webhook are below."

// noteFor is the cookie that leaves note for the page of siteID (removed
// when maxAge is negative). It holds the note's kind and the site's id,
// never the secret, which the page reads, sealed, from the records
// database: any instance behind a load balancer shows it, and none keeps
// state in memory. HttpOnly and SameSite=Lax; behind TLS it is Secure with
// the __Host- prefix, which requires Path "/", else its Path is the site's
// page.
func (s *Server) noteFor(r *http.Request, siteID, note string, maxAge int) *http.Cookie {
	return s.memberCookie(r, noteCookie, "/members/sites/"+siteID, note+"."+siteID, maxAge)
}

// leaveNote tells the next GET of the page of siteID to show note, once.
func (s *Server) leaveNote(w http.ResponseWriter, r *http.Request, siteID, note string) {
	http.SetCookie(w, s.noteFor(r, siteID, note, int(noteTTL/time.Second)))
}

// takeNote returns the note left for the page of siteID and removes it;
// "" when there is none. A note for another site is left alone to expire.
func (s *Server) takeNote(w http.ResponseWriter, r *http.Request, siteID string) string {
	c, err := r.Cookie(s.cookieName(r, noteCookie))
	if err != nil {
		return ""
	}
	note, id, ok := strings.Cut(c.Value, ".")
	if !ok || id != siteID {
		return ""
	}
	http.SetCookie(w, s.noteFor(r, siteID, "", -1))
	return note
}
