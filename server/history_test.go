package server

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// apiTimeRE is the one timestamp form of the API: RFC 3339 in UTC with
// milliseconds.
var apiTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// TestHistoryPages: the history's next link is there only when there is a
// next page, its times have one precision, and its 400s speak of its own
// parameters.
func TestHistoryPages(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	s := h.saveSite(auth, `{"url":"http://shop.example/index.html","schedule":"weekly"}`)
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, ran := range []time.Time{base.Add(123456789), base.Add(time.Hour + 500*time.Millisecond)} {
		due := ran.Truncate(time.Second)
		e := records.Entry{ID: records.HistoryID(s.ID, due), SiteID: s.ID, DueAt: due, RanAt: ran, Trigger: "scheduled",
			Status: "complete", ReportID: strings.Repeat(string(rune('A'+i)), 26), Changes: changesJSON(t, schedule.Changes{First: i == 0})}
		if _, err := h.db.AddEntry(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	type page struct {
		Entries []struct {
			ID    string `json:"id"`
			RanAt string `json:"ran_at"`
			DueAt string `json:"due_at"`
		} `json:"entries"`
		Next string `json:"next"`
	}
	get := func(path string) page {
		t.Helper()
		resp, b := h.do("GET", path, "", auth)
		wantStatus(t, resp, b, http.StatusOK)
		return decode[page](t, b)
	}
	all := get("/api/v1/sites/" + s.ID + "/history?limit=2")
	if len(all.Entries) != 2 || all.Next != "" {
		t.Errorf("limit=2 of 2 entries: %d entries, next %q; want 2 and no next link", len(all.Entries), all.Next)
	}
	for _, e := range all.Entries {
		for _, ts := range []string{e.RanAt, e.DueAt} {
			if !apiTimeRE.MatchString(ts) {
				t.Errorf("entry %s has the time %q, want RFC 3339 with milliseconds", e.ID, ts)
			}
		}
	}
	first := get("/api/v1/sites/" + s.ID + "/history?limit=1")
	if len(first.Entries) != 1 || first.Next == "" {
		t.Fatalf("limit=1 of 2 entries: %d entries, next %q; want 1 and a next link", len(first.Entries), first.Next)
	}
	second := get(first.Next)
	if len(second.Entries) != 1 || second.Next != "" || second.Entries[0].ID == first.Entries[0].ID {
		t.Errorf("the next page %s: %+v; want the other entry and no next link", first.Next, second)
	}
	for _, tc := range []struct{ query, says string }{
		{"limit=0", "The limit parameter must be a whole number from 1 to 100."},
		{"before=yesterday", "The before parameter must be a time such as 2026-12-01T03:00:00.000Z"},
		{"page=2", "The history takes the parameters limit and before; page is not one of them."},
	} {
		resp, b := h.do("GET", "/api/v1/sites/"+s.ID+"/history?"+tc.query, "", auth)
		if e := wantError(t, resp, b, http.StatusBadRequest, codeBadRequest, false); !strings.HasPrefix(e.Error.Message, tc.says) {
			t.Errorf("?%s: %q, want it to start %q", tc.query, e.Error.Message, tc.says)
		}
	}
	h.checkSpec(t)
}

// TestRunNowAllowanceInWords: the 429 of a member over the run-now
// allowance names the allowance.
func TestRunNowAllowanceInWords(t *testing.T) {
	h := newMemberHarness(t, memberOpts{runs: 1})
	_, auth := h.member("ana@example.com")
	s := h.saveSite(auth, `{"url":"http://shop.example/index.html","schedule":"weekly"}`)
	resp, b := h.do("POST", "/api/v1/sites/"+s.ID+"/audits", "", auth)
	wantStatus(t, resp, b, http.StatusAccepted)
	resp, b = h.do("POST", "/api/v1/sites/"+s.ID+"/audits", "", auth)
	e := wantError(t, resp, b, http.StatusTooManyRequests, codeRateLimited, true)
	if want := "Your allowance is 1 run an hour"; !strings.HasPrefix(e.Error.Message, want) {
		t.Errorf("message %q, want it to start %q", e.Error.Message, want)
	}
	h.waitHistory(auth, s.ID, 1)
	h.checkSpec(t)
}

// changesJSON is c as a history entry keeps it, its lists never null.
func changesJSON(tb testing.TB, c schedule.Changes) json.RawMessage {
	tb.Helper()
	for _, l := range []*[]schedule.FindingKey{&c.Appeared, &c.Resolved} {
		if *l == nil {
			*l = []schedule.FindingKey{}
		}
	}
	if c.Fields == nil {
		c.Fields = []schedule.FieldChange{}
	}
	if c.Reasons == nil {
		c.Reasons = []string{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
