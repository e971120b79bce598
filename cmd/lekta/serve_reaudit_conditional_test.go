package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
)

// TestServeReauditConditional saves /kettle.html (which answers 304 to a
// matching If-None-Match) on a seconds-long schedule in a real lekta serve
// (Chromium, SQLite, River). From the site's own request log: the second
// re-audit's plain request carries the first one's ETag and is answered
// 304, while the render lane's request is answered 200. The second report
// says not_modified and carries the first one's plain extract, and its
// shares equal the first one's.
func TestServeReauditConditional(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	dir := t.TempDir()
	key := mustMemberKey(t, dir)
	auth := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	s := startServeProc(t, h, restartArgs(site, dir, "--rate", "100/1m", "--timeout", "20s", "--cache-ttl", "1ms",
		"--reaudit-min-interval", "3s")...)
	resp, body := s.do("POST", "/api/v1/sites", `{"url":"http://shop.example/kettle.html","schedule":"3s"}`, auth)
	if resp.StatusCode != 201 {
		t.Fatalf("save site: %d %s", resp.StatusCode, body)
	}
	var saved struct{ ID string }
	json.Unmarshal(body, &saved)

	db, err := records.Open(context.Background(), records.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var es []records.Entry
	for deadline := time.Now().Add(90 * time.Second); ; {
		es, err = db.History(context.Background(), saved.ID, 100, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d re-audits recorded in 90 s:\n%s", len(es), s.stderr)
		}
		time.Sleep(250 * time.Millisecond)
	}
	first, second := es[len(es)-1], es[len(es)-2]
	r1, r2 := s.waitReport(first.ReportID), s.waitReport(second.ReportID)
	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, s.stderr)
	}
	if first.ETag != testsite.KettleETag || first.LastModified == "" {
		t.Errorf("first history entry kept ETag %q, Last-Modified %q; want %q and the page's date", first.ETag, first.LastModified, testsite.KettleETag)
	}

	var plain, rendered []testsite.Hit
	for _, hit := range site.HitsOf("shop.example", "/kettle.html") {
		if strings.Contains(hit.UserAgent, "compatible; LektaBot") {
			plain = append(plain, hit)
		} else {
			rendered = append(rendered, hit)
		}
	}
	if len(plain) < 2 || len(rendered) < 2 {
		t.Fatalf("the site saw %d plain and %d render requests of the page, want 2 of each at least", len(plain), len(rendered))
	}
	if p := plain[0]; p.IfNoneMatch != "" || p.Status != 200 {
		t.Errorf("first plain request: If-None-Match %q, answered %d; want none and 200", p.IfNoneMatch, p.Status)
	}
	if p := plain[1]; p.IfNoneMatch != testsite.KettleETag || p.Status != 304 {
		t.Fatalf("second plain request: If-None-Match %q, answered %d; want %q and 304", p.IfNoneMatch, p.Status, testsite.KettleETag)
	}
	for i, r := range rendered[:2] {
		if r.Status != 200 || r.IfNoneMatch != "" {
			t.Errorf("render request %d: If-None-Match %q, answered %d; want an unconditional 200", i, r.IfNoneMatch, r.Status)
		}
	}

	p1, p2 := r1.Lanes.Plain, r2.Lanes.Plain
	if p1.NotModified || !p2.NotModified || p2.HTTPStatus != 304 {
		t.Fatalf("not_modified %v then %v, second http_status %d; want false, true, 304", p1.NotModified, p2.NotModified, p2.HTTPStatus)
	}
	if p1.Page == nil || p2.Page == nil || p2.Page.Title != p1.Page.Title || p2.Page.WordCount != p1.Page.WordCount || p1.Page.WordCount == 0 {
		t.Fatalf("second plain extract %+v, want the first one's title and word count (%+v)", p2.Page, p1.Page)
	}
	if r2.Status != "complete" || r2.Lanes.Render.HTTPStatus != 200 || r2.Lanes.Render.Page == nil {
		t.Fatalf("second report %s, render lane %d: want complete with the render lane run", r2.Status, r2.Lanes.Render.HTTPStatus)
	}
	share := func(f *float64) float64 {
		if f == nil {
			return -1
		}
		return *f
	}
	v1, v2 := r1.Verdict, r2.Verdict
	if share(v1.TextShare) != share(v2.TextShare) || share(v1.LinkShare) != share(v2.LinkShare) {
		t.Errorf("shares text %v→%v, links %v→%v; want equal", share(v1.TextShare), share(v2.TextShare), share(v1.LinkShare), share(v2.LinkShare))
	}
	for _, d := range r2.Diff {
		if (d.Field == "status" || d.Field == "content_type") && d.Change != compare.ChangeSame {
			t.Errorf("second report's diff has a false %s difference: %+v", d.Field, d)
		}
	}
	t.Logf("second plain request If-None-Match %s → %d; shares text %v, links %v", plain[1].IfNoneMatch, plain[1].Status, share(v2.TextShare), share(v2.LinkShare))
}
