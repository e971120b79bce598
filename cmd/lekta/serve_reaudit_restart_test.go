package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// TestReauditRescuedAfterKill saves a site on the SQLite default, kills
// lekta serve with SIGKILL while a scheduled re-audit's page is held at the
// site, and starts it again on the same data dir. River's rescue gives the
// dead job back; it had started, so it is not run again: its history entry
// appears once, under the id of its due time, as an error saying why;
// every later re-audit is recorded once, and the site saw one plain
// request per recorded re-audit, the killed one's included (its own log).
// No job is left running.
func TestReauditRescuedAfterKill(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	dir := t.TempDir()
	key := mustMemberKey(t, dir)
	args := restartArgs(site, dir, "--rate", "100/1m", "--timeout", "5s", "--cache-ttl", "1ms",
		"--reaudit-min-interval", "4s", "--rescue-after", "8s", "--renderers", "1")
	entered, release := site.Hold(t, "/held.html")

	a := startServeProc(t, h, args...)
	resp, body := a.do("POST", "/api/v1/sites", `{"url":"http://shop.example/held.html","schedule":"4s"}`,
		map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
	if resp.StatusCode != 201 {
		t.Fatalf("save site: %d %s", resp.StatusCode, body)
	}
	var saved struct{ ID string }
	json.Unmarshal(body, &saved)
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatalf("no re-audit reached the page:\n%s", a.stderr)
	}
	a.kill()
	release()
	// River's own table says which job the dead instance held: the one
	// that recorded its start (one renderer: no other ran beside it).
	rdb, err := sql.Open("sqlite", filepath.Join(dir, schedule.RiverFile))
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	var raw string
	var jobID int64
	if err := rdb.QueryRow("SELECT id, json(args) FROM river_job WHERE kind = 'lekta_reaudit' AND state = 'running' AND json_extract(metadata, '$.output.started_at') IS NOT NULL").Scan(&jobID, &raw); err != nil {
		t.Fatalf("the killed re-audit's job: %v", err)
	}
	var held schedule.ReauditArgs
	if err := json.Unmarshal([]byte(raw), &held); err != nil || held.DueMS == 0 {
		t.Fatalf("the killed job's args %q: %v", raw, err)
	}
	heldID := records.HistoryID(saved.ID, time.UnixMilli(held.DueMS))

	b := startServeProc(t, h, args...)
	db, err := records.Open(context.Background(), records.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(70 * time.Second)
	for {
		ok, err := db.HasEntry(context.Background(), heldID)
		if err != nil {
			t.Fatal(err)
		}
		es, _ := db.History(context.Background(), saved.ID, 100, time.Time{})
		if ok && len(es) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			var state, errs string
			var attempt int
			_ = rdb.QueryRow("SELECT state, attempt, coalesce(json(errors), '') FROM river_job WHERE id = ?", jobID).Scan(&state, &attempt, &errs)
			t.Fatalf("the rescued re-audit %s was not recorded within 2 min (%d entries); its job: %s, attempt %d, %s", heldID, len(es), state, attempt, errs)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err := b.stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, b.stderr)
	}
	es, _ := db.History(context.Background(), saved.ID, 100, time.Time{})
	seen := map[string]bool{}
	for _, e := range es {
		if seen[e.ID] || e.Trigger != "scheduled" {
			t.Fatalf("entry %+v twice or not scheduled", e)
		}
		seen[e.ID] = true
		if e.ID == heldID && e.Status != "error" {
			t.Errorf("the killed re-audit's entry: status %s, want error (not run again)", e.Status)
		}
	}
	plain := 0
	for _, hit := range site.HitsOf("shop.example", "/held.html") {
		if strings.Contains(hit.UserAgent, "compatible; LektaBot") {
			plain++
		}
	}
	if plain != len(es) {
		t.Fatalf("the site saw %d plain requests for %d recorded re-audits, the killed one's included", plain, len(es))
	}
	var running int
	if err := rdb.QueryRow("SELECT count(*) FROM river_job WHERE state = 'running'").Scan(&running); err != nil || running != 0 {
		t.Fatalf("%d jobs left running (%v)", running, err)
	}
	t.Logf("rescued job %s recorded once; %d re-audits, %d plain requests", heldID, len(es), plain)
}
