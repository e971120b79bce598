package server

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestScheduleInWords: the dashboard and the site page say a schedule as
// the form's choices do, never its stored value ("daily").
func TestScheduleInWords(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	site := h.saveSite(auth, `{"url":"http://shop.example/","schedule":"daily"}`)
	b := signedIn(t, h, auth)
	for _, path := range []string{"/members/sites", "/members/sites/" + site.ID} {
		_, pg := b.send("GET", path, nil)
		if !strings.Contains(pg, ">Daily, at night<") || strings.Contains(pg, ">daily<") {
			t.Errorf("%s does not say the schedule in words:\n%s", path, pg)
		}
	}
}

// TestSitePageRefreshesWhileRunning: while a run of the site runs, its
// page says so and reloads itself, as the running report page does; once
// the run has ended it shows the run and stops reloading.
func TestSitePageRefreshesWhileRunning(t *testing.T) {
	h := newMemberHarness(t, memberOpts{runs: 10, gated: true})
	_, auth := h.member("ana@example.com")
	site := h.saveSite(auth, `{"url":"http://shop.example/js-title.html","schedule":"weekly"}`)
	resp, b := h.do("POST", "/api/v1/sites/"+site.ID+"/audits", "", auth)
	wantStatus(t, resp, b, http.StatusAccepted)
	<-h.rend.started
	br := signedIn(t, h, auth)
	deadline := time.Now().Add(30 * time.Second)
	var pg string
	for {
		_, pg = br.send("GET", "/members/sites/"+site.ID, nil)
		if strings.Contains(pg, "Running now.") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(pg, `<meta http-equiv="refresh" content="3">`) || !strings.Contains(pg, "Running now. This page refreshes itself until the run ends.") {
		t.Fatalf("the site page of a running run does not refresh:\n%s", pg)
	}
	h.open()
	h.waitHistory(auth, site.ID, 1)
	if _, pg = br.send("GET", "/members/sites/"+site.ID, nil); strings.Contains(pg, `http-equiv="refresh"`) {
		t.Errorf("the site page still refreshes after the run:\n%s", pg)
	}
}
