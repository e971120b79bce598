package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
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
)

// siteJSON is a saved site as the API shows it.
type siteJSON struct {
	ID       string `json:"id"`
	URL      string `json:"url"`
	Schedule string `json:"schedule"`
	// WebhookURL is "" when the site has none.
	WebhookURL string `json:"webhook_url"`
	// WebhookSecret is shown once: when a webhook URL is set.
	WebhookSecret string        `json:"webhook_secret,omitempty"`
	BadgeURL      string        `json:"badge_url"`
	CreatedAt     time.Time     `json:"created_at"`
	UpdatedAt     time.Time     `json:"updated_at"`
	LastWebhook   *lastWebhook  `json:"last_webhook,omitempty"`
	Latest        *historyEntry `json:"latest,omitempty"`
}

type lastWebhook struct {
	At     time.Time `json:"at"`
	Result string    `json:"result"`
}

// historyEntry is one re-audit as the API shows it.
type historyEntry struct {
	ID         string          `json:"id"`
	DueAt      time.Time       `json:"due_at"`
	RanAt      time.Time       `json:"ran_at"`
	Trigger    string          `json:"trigger"`
	Status     string          `json:"status"`
	ReportID   string          `json:"report_id"`
	ReportURL  string          `json:"report_url,omitempty"`
	Rule       string          `json:"rule,omitempty"`
	TextShare  *float64        `json:"text_share,omitempty"`
	LinkShare  *float64        `json:"link_share,omitempty"`
	Critical   int             `json:"critical"`
	Regression bool            `json:"regression"`
	Changes    json.RawMessage `json:"changes"`
	// Cached marks a run answered from the result cache; CacheAgeS is the
	// result's age then.
	Cached    bool  `json:"cached"`
	CacheAgeS int64 `json:"cache_age_s,omitempty"`
}

func siteView(s records.Site, showSecret bool) siteJSON {
	v := siteJSON{ID: s.ID, URL: s.URL, Schedule: s.Schedule, WebhookURL: s.WebhookURL,
		BadgeURL: "/badge/" + s.BadgeToken + ".svg", CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	if showSecret && s.WebhookURL != "" {
		v.WebhookSecret = s.WebhookSecret
	}
	if !s.WebhookAt.IsZero() {
		v.LastWebhook = &lastWebhook{At: s.WebhookAt, Result: s.WebhookResult}
	}
	return v
}

func entryView(e records.Entry) historyEntry {
	h := historyEntry{ID: e.ID, DueAt: e.DueAt, RanAt: e.RanAt, Trigger: e.Trigger, Status: e.Status, ReportID: e.ReportID,
		Rule: e.Rule, TextShare: e.TextShare, LinkShare: e.LinkShare, Critical: e.Critical, Regression: e.Regression, Changes: e.Changes}
	if e.ReportID != "" {
		h.ReportURL = "/r/" + e.ReportID
	}
	if len(h.Changes) == 0 {
		h.Changes = json.RawMessage("{}")
	}
	h.Cached, h.CacheAgeS = cachedRun(e)
	return h
}

// cachedRun reads from an entry's summary whether the run was answered
// from the cache, and the result's age then.
func cachedRun(e records.Entry) (bool, int64) {
	var sum schedule.Summary
	if json.Unmarshal(e.Summary, &sum) != nil {
		return false, 0
	}
	return sum.Cached, sum.CacheAgeS
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

func readSiteInput(w http.ResponseWriter, r *http.Request) (siteInput, error) {
	var in siteInput
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSiteBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return in, &apiError{Status: http.StatusRequestEntityTooLarge, Code: codeTooLarge,
				Message: fmt.Sprintf("The body is larger than %d KiB.", maxSiteBody>>10)}
		}
		return in, badRequest("The body must be a JSON object with url, schedule and optionally webhook_url: " + err.Error() + ".")
	}
	return in, nil
}

// checkSite validates a site's URL, schedule and webhook URL into site.
func (s *Server) checkSite(in siteInput, site *records.Site) error {
	if in.URL != nil {
		u, err := s.cfg.Guard.ParseTarget(*in.URL)
		if err != nil {
			return err
		}
		site.URL = u.String()
	}
	if in.Schedule != nil {
		if err := s.cfg.Queue.CheckSchedule(*in.Schedule); err != nil {
			return &apiError{Status: http.StatusBadRequest, Code: codeBadSchedule, Message: err.Error() + "."}
		}
		site.Schedule = *in.Schedule
	}
	if in.WebhookURL != nil && *in.WebhookURL != site.WebhookURL {
		site.WebhookURL, site.WebhookSecret = "", ""
		if *in.WebhookURL != "" {
			u, err := s.cfg.Guard.ParseTarget(*in.WebhookURL)
			if err != nil {
				return &apiError{Status: http.StatusBadRequest, Code: codeTargetRefused,
					Message: "webhook_url: " + err.Error() + ".", cause: err}
			}
			site.WebhookURL, site.WebhookSecret = u.String(), records.NewSecret()
		}
	}
	if site.URL == "" || site.Schedule == "" {
		return badRequest("url and schedule are required.")
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
			return memberError(err)
		}
		w.Header().Set("Location", "/api/v1/sites/"+site.ID)
		writeJSON(w, http.StatusCreated, siteView(site, true))
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
			v := siteView(site, false)
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
		v := siteView(site, false)
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
			return memberError(err)
		}
		site.UpdatedAt = s.cfg.Now().UTC()
		writeJSON(w, http.StatusOK, siteView(site, site.WebhookURL != before))
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

// siteHistory is GET /api/v1/sites/{id}/history?limit=&before=.
func (s *Server) siteHistory() http.Handler {
	return s.memberAPI(func(w http.ResponseWriter, r *http.Request, m records.Member) error {
		site, err := s.ownSite(r, m)
		if err != nil {
			return err
		}
		limit := 20
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 100 {
				return badRequest("limit must be a whole number from 1 to 100.")
			}
			limit = n
		}
		var before time.Time
		if v := r.URL.Query().Get("before"); v != "" {
			if before, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return badRequest("before must be a time such as 2026-12-01T03:00:00Z (the ran_at of the last entry you have).")
			}
		}
		es, err := s.cfg.Members.History(r.Context(), site.ID, limit, before)
		if err != nil {
			return memberError(err)
		}
		out := struct {
			Entries []historyEntry `json:"entries"`
			Next    string         `json:"next,omitempty"`
		}{Entries: []historyEntry{}}
		for _, e := range es {
			out.Entries = append(out.Entries, entryView(e))
		}
		if len(es) == limit {
			out.Next = fmt.Sprintf("/api/v1/sites/%s/history?limit=%d&before=%s", site.ID, limit, es[len(es)-1].RanAt.Format(time.RFC3339Nano))
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})
}
