package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// historyEntry is one re-audit as the API shows it.
type historyEntry struct {
	ID         string          `json:"id"`
	DueAt      audit.Timestamp `json:"due_at"`
	RanAt      audit.Timestamp `json:"ran_at"`
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

// entryView is a re-audit as the API shows it.
func entryView(e records.Entry) historyEntry {
	h := historyEntry{ID: e.ID, DueAt: audit.At(e.DueAt), RanAt: audit.At(e.RanAt), Trigger: e.Trigger, Status: e.Status, ReportID: e.ReportID,
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

// historyParams are the query parameters of the history.
var historyParams = []string{"limit", "before"}

// historyQuery reads ?limit= and ?before= of the history; its refusals
// speak of those parameters.
func historyQuery(q url.Values) (limit int, before time.Time, err error) {
	for name := range q {
		if !slices.Contains(historyParams, name) {
			return 0, before, badRequest("The history takes the parameters limit and before; " + name + " is not one of them.")
		}
	}
	limit = 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return 0, before, badRequest("The limit parameter must be a whole number from 1 to 100.")
		}
		limit = n
	}
	if v := q.Get("before"); v != "" {
		if before, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return 0, before, badRequest("The before parameter must be a time such as 2026-12-01T03:00:00.000Z: the ran_at of the last entry you have, or follow the next link.")
		}
	}
	return limit, before, nil
}

// siteHistory is GET /api/v1/sites/{id}/history?limit=&before=. Its next
// link is there only when there is a next page.
func (s *Server) siteHistory() http.Handler {
	return s.memberAPI(func(w http.ResponseWriter, r *http.Request, m records.Member) error {
		site, err := s.ownSite(r, m)
		if err != nil {
			return err
		}
		limit, before, err := historyQuery(r.URL.Query())
		if err != nil {
			return err
		}
		// One entry more than asked says whether a next page exists.
		es, err := s.cfg.Members.History(r.Context(), site.ID, limit+1, before)
		if err != nil {
			return memberError(err)
		}
		out := struct {
			Entries []historyEntry `json:"entries"`
			Next    string         `json:"next,omitempty"`
		}{Entries: []historyEntry{}}
		if len(es) > limit {
			es = es[:limit]
			out.Next = fmt.Sprintf("/api/v1/sites/%s/history?limit=%d&before=%s", site.ID, limit, url.QueryEscape(es[len(es)-1].RanAt.UTC().Format(time.RFC3339Nano)))
		}
		for _, e := range es {
			out.Entries = append(out.Entries, entryView(e))
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})
}
