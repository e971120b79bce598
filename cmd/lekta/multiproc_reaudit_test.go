package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the test reads River's table
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
)

// TestMultiProcessReaudits runs 3 lekta serve processes on one PostgreSQL
// and one Redis with 8 saved sites on 4 hosts at a 10 s interval, and
// kills one of them with SIGKILL mid-run. From the test site's own log:
// no host ever has more than one request in flight, and every plain page
// request belongs to a recorded re-audit (at most one, the killed
// instance's, does not); every site is re-audited; no job is left running.
func TestMultiProcessReaudits(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	redisURL, raw := redistest.Shared(t)
	prefix := redistest.Prefix(t, raw)
	dbURL := pgtest.Database(t)
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	hosts := []string{"h0.example", "h1.example", "h2.example", "h3.example"}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"members", "add", "ana@example.com", "--database-url", dbURL}, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("members add: %v %s", err, stderr.String())
	}
	key, _, _ := strings.Cut(stdout.String(), "\n")
	resolve, allow := site.ResolveFlags(hosts...)
	args := []string{"--database-url", dbURL, "--secrets-key-file", sharedSecretsKey(t), "--redis-url", redisURL, "--redis-prefix", strings.TrimSuffix(prefix, ":"), "--allow-addr", allow,
		"--rate", "1/1s", "--cache-ttl", "1ms", "--timeout", "10s", "--reaudit-min-interval", "10s", "--rescue-after", "12s", "--renderers", "1"}
	for _, r := range resolve {
		args = append(args, "--resolve", r)
	}
	var procs []*served
	for range 3 {
		procs = append(procs, startServeProc(t, h, slices.Concat(args, []string{"--data-dir", t.TempDir()})...))
	}
	auth := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	var ids []string
	// Two sites per host: 8 due every 10 s stay within what three (then
	// two) race-built renderers finish on a loaded machine; 12 saturated
	// them, and a site could then wait past the test's end.
	for i := range 8 {
		body := fmt.Sprintf(`{"url":"http://%s/index.html?site=%d","schedule":"10s"}`, hosts[i%4], i)
		resp, b := procs[i%3].do("POST", "/api/v1/sites", body, auth)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("save site %d: %d %s", i, resp.StatusCode, b)
		}
		ids = append(ids, string(b[strings.Index(string(b), `"id":"`)+6:][:18]))
	}
	time.Sleep(12 * time.Second)
	procs[2].kill()
	time.Sleep(40 * time.Second) // past the dead instance's host lease (--timeout 10s + 15 s)
	for _, p := range procs[:2] {
		if err := p.stop(); err != nil {
			t.Errorf("stop: %v\n%s", err, p.stderr)
		}
	}
	db, err := records.Open(context.Background(), records.Config{DatabaseURL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries := 0
	statuses := map[string]int{}
	for i, id := range ids {
		es, err := db.History(context.Background(), id, 1000, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			t.Errorf("site %d (%s) was never re-audited; its jobs: %s", i, id, jobsOf(t, dbURL, id))
		}
		entries += len(es)
		for _, e := range es {
			statuses[e.Status+" "+e.Trigger]++
		}
	}
	t.Logf("statuses %v", statuses)
	plain := 0
	for _, host := range hosts {
		if n := site.MaxConcurrent(host); n > 1 {
			t.Errorf("%s had %d requests in flight at once", host, n)
		}
		for _, hit := range site.HitsOf(host, "/index.html") {
			if strings.Contains(hit.UserAgent, "compatible; LektaBot") {
				plain++
			}
		}
		// Each audit starts by reading robots.txt, just after its start
		// was charged: at --rate 1/1s no two reads of one host come
		// closer than the window, less the charge-to-request delay.
		starts := site.HitsOf(host, "/robots.txt")
		slices.SortFunc(starts, func(a, b testsite.Hit) int { return a.Start.Compare(b.Start) })
		for i := 1; i < len(starts); i++ {
			if gap := starts[i].Start.Sub(starts[i-1].Start); gap < time.Second-chargeToRequest {
				t.Errorf("%s: audits started %v apart at the site (robots.txt reads %d and %d), the window is 1 s", host, gap, i-1, i)
			}
		}
	}
	if plain < entries || plain > entries+1 {
		t.Errorf("the sites saw %d plain page requests for %d recorded re-audits (one killed run may lack its entry)", plain, entries)
	}
	pg, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	var running int
	if err := pg.QueryRow("SELECT count(*) FROM river_job WHERE state = 'running' AND kind = 'lekta_reaudit'").Scan(&running); err != nil {
		t.Fatal(err)
	}
	// The killed instance's job, if it held one, is rescued only after
	// --rescue-after; the two stopped cleanly and left none.
	if running > 1 {
		t.Errorf("%d re-audit jobs left running", running)
	}
	t.Logf("3 instances, 8 sites on 4 hosts: %d re-audits recorded, %d plain page requests, %d job(s) of the killed instance still running", entries, plain, running)
}

// chargeToRequest bounds, for the window checks made at the site, the time
// between an audit's charge in the store and its robots.txt request.
const chargeToRequest = 500 * time.Millisecond

// jobsOf lists River's jobs of a site: state, attempt, scheduled time.
func jobsOf(t *testing.T, dbURL, siteID string) string {
	pg, err := sql.Open("pgx", dbURL)
	if err != nil {
		return err.Error()
	}
	defer pg.Close()
	rows, err := pg.Query("SELECT state, attempt, scheduled_at, coalesce(errors::text, '') FROM river_job WHERE args->>'site_id' = $1 ORDER BY id", siteID)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var state, errs string
		var attempt int
		var at time.Time
		_ = rows.Scan(&state, &attempt, &at, &errs)
		out = append(out, fmt.Sprintf("%s/%d/%s/%.200s", state, attempt, at.Format("15:04:05.000"), errs))
	}
	return strings.Join(out, "; ")
}
