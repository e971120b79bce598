package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

// Defaults of the member limits.
const (
	DefaultSitesPerMember = 50
	DefaultRunsPerHour    = 10
	// maxSiteBody caps the JSON body of the sites API.
	maxSiteBody = 16 << 10
)

// Error codes of the member API.
const (
	codeUnauthorized = "unauthorized"
	codeBadSchedule  = "bad_schedule"
	codeTooLarge     = "too_large"
	codeLimit        = "limit_reached"
	codeSaved        = "already_saved"
)

// siteJSON is a saved site as the API shows it.
type siteJSON struct {
	ID       string `json:"id"`
	URL      string `json:"url"`
	Schedule string `json:"schedule"`
	// WebhookURL is "" when the site has none.
	WebhookURL string `json:"webhook_url"`
	// WebhookSecret is shown once: when a webhook URL is set.
	WebhookSecret string          `json:"webhook_secret,omitempty"`
	BadgeURL      string          `json:"badge_url"`
	CreatedAt     audit.Timestamp `json:"created_at"`
	UpdatedAt     audit.Timestamp `json:"updated_at"`
	LastWebhook   *lastWebhook    `json:"last_webhook,omitempty"`
	Latest        *historyEntry   `json:"latest,omitempty"`
}

type lastWebhook struct {
	At     audit.Timestamp `json:"at"`
	Result string          `json:"result"`
}

// siteView is a site as the API shows it.
func (s *Server) siteView(site records.Site, showSecret bool) siteJSON {
	v := siteJSON{ID: site.ID, URL: site.URL, Schedule: site.Schedule, WebhookURL: site.WebhookURL,
		BadgeURL: s.badgeURL(site), CreatedAt: audit.At(site.CreatedAt), UpdatedAt: audit.At(site.UpdatedAt)}
	if showSecret && site.WebhookURL != "" {
		v.WebhookSecret = site.WebhookSecret
	}
	if !site.WebhookAt.IsZero() {
		v.LastWebhook = &lastWebhook{At: audit.At(site.WebhookAt), Result: site.WebhookResult}
	}
	return v
}

func unauthorized(msg string) *apiError {
	return &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: msg, outcome: codeUnauthorized}
}

func forbiddenSite() *apiError {
	return &apiError{Status: http.StatusForbidden, Code: codeForbidden, Message: "This site belongs to another member."}
}

func noSite() *apiError {
	return &apiError{Status: http.StatusNotFound, Code: codeNotFound, Message: "No saved site has this id."}
}

// savedError is the API's 409 for a URL the member saved already, as
// another site: the saved site's id in the body and its address in
// Location. Other errors are memberError's.
func savedError(w http.ResponseWriter, err error) error {
	var ex *records.SiteExistsError
	if !errors.As(err, &ex) {
		return memberError(err)
	}
	w.Header().Set("Location", "/api/v1/sites/"+ex.ID)
	return &apiError{Status: http.StatusConflict, Code: codeSaved, SiteID: ex.ID, cause: err,
		Message: "You saved this URL already, as another site; change that one instead: its id is in site_id, its address in Location."}
}

// memberError maps a records error of the member API.
func memberError(err error) error {
	switch {
	case errors.Is(err, records.ErrUnavailable):
		return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable,
			Message:    "The records database did not answer; try again in " + compare.Duration(storeRetryAfter) + ".",
			RetryAfter: storeRetryAfter, cause: err}
	case errors.Is(err, records.ErrNotFound):
		return noSite()
	}
	return err
}

// bearer returns the member whose API key the request carries.
func (s *Server) bearer(r *http.Request) (records.Member, error) {
	h := r.Header.Get("Authorization")
	key, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || key == "" {
		return records.Member{}, unauthorized("Send your API key as Authorization: Bearer lekta_…")
	}
	m, err := s.cfg.Members.MemberByKey(r.Context(), strings.TrimSpace(key))
	switch {
	case errors.Is(err, records.ErrRevoked):
		return records.Member{}, unauthorized("This API key was revoked; ask the operator for a new one.")
	case errors.Is(err, records.ErrNotFound):
		return records.Member{}, unauthorized("This API key is not valid.")
	case err != nil:
		return records.Member{}, memberError(err)
	}
	return m, nil
}

// memberHandler is a member API handler: the member is already checked.
type memberHandler func(w http.ResponseWriter, r *http.Request, m records.Member) error

func (s *Server) memberAPI(h memberHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		m, err := s.bearer(r)
		if err == nil {
			err = h(w, r, m)
		}
		if err != nil {
			var e *apiError
			if errors.As(err, &e) && e.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="lekta"`)
			}
			writeError(w, err)
		}
	})
}

// ownSite returns the site id of the request's path if it is m's.
func (s *Server) ownSite(r *http.Request, m records.Member) (records.Site, error) {
	site, err := s.cfg.Members.Site(r.Context(), r.PathValue("id"))
	if err != nil {
		return records.Site{}, memberError(err)
	}
	if site.MemberID != m.ID {
		return records.Site{}, forbiddenSite()
	}
	return site, nil
}

// siteInput is the body of POST and PATCH /api/v1/sites.
type siteInput struct {
	URL        *string `json:"url"`
	Schedule   *string `json:"schedule"`
	WebhookURL *string `json:"webhook_url"`
}

// siteBody is the body of POST and PATCH /api/v1/sites.
var siteBody = jsonBody{limit: maxSiteBody, shape: "url and schedule fields, and optionally webhook_url"}

func readSiteInput(w http.ResponseWriter, r *http.Request) (siteInput, error) {
	var in siteInput
	err := readJSON(w, r, siteBody, &in)
	return in, err
}

// fieldError is a refusal of one field of a site (url, schedule or
// webhook_url): the API answers err, a form shows words (err's message
// when empty) beside the field.
type fieldError struct {
	field, words string
	err          error
}

func (e *fieldError) Error() string { return e.err.Error() }

func (e *fieldError) Unwrap() error { return e.err }

// checkSite validates a site's URL, schedule and webhook URL into site; a
// refusal is a *fieldError naming the field.
func (s *Server) checkSite(in siteInput, site *records.Site) error {
	if in.URL != nil {
		u, err := s.cfg.Guard.ParseTarget(policy.WithDefaultScheme(*in.URL))
		if err != nil {
			return &fieldError{field: "url", err: err}
		}
		site.URL = u.String()
	}
	if in.Schedule != nil {
		if err := s.cfg.Queue.CheckSchedule(*in.Schedule); err != nil {
			msg := err.Error() + "."
			var se interface{ Sentence() string } // schedule.SpecError
			if errors.As(err, &se) {
				msg = se.Sentence()
			}
			return &fieldError{field: "schedule", err: &apiError{Status: http.StatusBadRequest, Code: codeBadSchedule, Message: msg, cause: err}}
		}
		site.Schedule = *in.Schedule
	}
	if in.WebhookURL != nil && policy.WithDefaultScheme(*in.WebhookURL) != site.WebhookURL {
		site.WebhookURL, site.WebhookSecret = "", ""
		if *in.WebhookURL != "" {
			u, err := s.cfg.Guard.ParseTarget(policy.WithDefaultScheme(*in.WebhookURL))
			if err != nil {
				why := refusalWords(err)
				return &fieldError{field: "webhook_url", words: "This webhook address was refused: " + why + "; a webhook goes only to a public http or https address.",
					err: &apiError{Status: http.StatusBadRequest, Code: codeTargetRefused,
						Message: "The webhook_url was refused: " + why + ".", cause: err}}
			}
			site.WebhookURL, site.WebhookSecret = u.String(), records.NewSecret()
		}
	}
	if site.URL == "" || site.Schedule == "" {
		return badRequest("A site needs a url and a schedule.")
	}
	return nil
}

func (s *Server) createSite() http.Handler {
	return s.memberAPI(func(w http.ResponseWriter, r *http.Request, m records.Member) error {
		in, err := readSiteInput(w, r)
		if err != nil {
			return err
		}
		site := records.Site{MemberID: m.ID}
		if err := s.checkSite(in, &site); err != nil {
			return err
		}
		site, err = s.cfg.Members.AddSite(r.Context(), site, s.cfg.SitesPerMember, s.cfg.Now())
		if errors.Is(err, records.ErrLimit) {
			return &apiError{Status: http.StatusForbidden, Code: codeLimit,
				Message: fmt.Sprintf("You have saved the most sites a member may (%d); remove one first.", s.cfg.SitesPerMember)}
		}
		if err != nil {
			return savedError(w, err)
		}
		w.Header().Set("Location", "/api/v1/sites/"+site.ID)
		writeJSON(w, http.StatusCreated, s.siteView(site, true))
		return nil
	})
}

func (s *Server) listSites() http.Handler {
	return s.memberAPI(func(w http.ResponseWriter, r *http.Request, m records.Member) error {
		sites, err := s.cfg.Members.MemberSites(r.Context(), m.ID)
		if err != nil {
			return memberError(err)
		}
		out := struct {
			Sites []siteJSON `json:"sites"`
		}{Sites: []siteJSON{}}
		for _, site := range sites {
			v := s.siteView(site, false)
			if e, err := s.cfg.Members.LatestEntry(r.Context(), site.ID); err == nil {
				ev := entryView(e)
				v.Latest = &ev
			}
			out.Sites = append(out.Sites, v)
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})
}

func (s *Server) getSite() http.Handler {
	return s.memberAPI(func(w http.ResponseWriter, r *http.Request, m records.Member) error {
		site, err := s.ownSite(r, m)
		if err != nil {
			return err
		}
		v := s.siteView(site, false)
		if e, err := s.cfg.Members.LatestEntry(r.Context(), site.ID); err == nil {
			ev := entryView(e)
			v.Latest = &ev
		}
		writeJSON(w, http.StatusOK, v)
		return nil
	})
}

func (s *Server) patchSite() http.Handler {
	return s.memberAPI(func(w http.ResponseWriter, r *http.Request, m records.Member) error {
		site, err := s.ownSite(r, m)
		if err != nil {
			return err
		}
		in, err := readSiteInput(w, r)
		if err != nil {
			return err
		}
		before := site.WebhookURL
		if err := s.checkSite(in, &site); err != nil {
			return err
		}
		if err := s.cfg.Members.UpdateSite(r.Context(), site, s.cfg.Now()); err != nil {
			return savedError(w, err)
		}
		site.UpdatedAt = s.cfg.Now().UTC()
		writeJSON(w, http.StatusOK, s.siteView(site, site.WebhookURL != before))
		return nil
	})
}

func (s *Server) deleteSite() http.Handler {
	return s.memberAPI(func(w http.ResponseWriter, r *http.Request, m records.Member) error {
		site, err := s.ownSite(r, m)
		if err != nil {
			return err
		}
		if err := s.cfg.Members.DeleteSite(r.Context(), site.ID); err != nil {
			return memberError(err)
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
}

// refusalWords is why the guard refused an address, without the name of
// its error kind ("target refused: 10.0.0.5 is a private address" says
// "10.0.0.5 is a private address").
func refusalWords(err error) string {
	msg := err.Error()
	for _, kind := range []error{policy.ErrTargetRefused, policy.ErrInvalidURL} {
		msg = strings.TrimPrefix(msg, kind.Error()+": ")
	}
	return msg
}
