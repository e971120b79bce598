package main

import (
	"bufio"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
)

// TestReauditAfterLongerTTL writes a result with lekta audit under the
// default 15-minute cache TTL, then starts lekta serve on the same data
// dir with --cache-ttl 1s and lets it re-audit a member's site of that URL
// on a seconds-long schedule. The server's own TTL wins: each re-audit
// contacts the site once and stores one report (the site's own log and the
// report rows say so), none is answered from the older result over and
// over, and the cache-hit counter agrees with the submissions answered from
// the cache.
func TestReauditAfterLongerTTL(t *testing.T) {
	site := testsite.Start(t)
	dir := t.TempDir()
	key := mustMemberKey(t, dir)
	const page = "http://shop.example/js-title.html"
	code, _, errOut := runCLIEnv(dataDirEnv(dir), append([]string{"audit", "--timeout", "30s", "--json"}, append(siteArgs(site), page)...)...)
	if code != exitOK {
		t.Fatalf("lekta audit: exit %d, %s", code, errOut)
	}
	s := startServe(t, site, []string{"shop.example"}, "--data-dir", dir, "--rate", "100/1m", "--cache-ttl", "1s",
		"--reaudit-min-interval", "2s")
	resp, b := s.do("POST", "/api/v1/sites", `{"url":"`+page+`","schedule":"2s"}`,
		map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
	if resp.StatusCode != 201 {
		t.Fatalf("save site: %d %s", resp.StatusCode, b)
	}
	var saved struct{ ID string }
	json.Unmarshal(b, &saved)
	db, err := records.Open(context.Background(), records.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		es, err := db.History(context.Background(), saved.ID, 100, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d re-audits recorded after 60 s, want 2; meanwhile %d report rows were stored and the site saw %d plain requests\n%s",
				len(es), reportRows(t, db), plainHits(site, "/js-title.html"), s.stderr)
		}
		time.Sleep(250 * time.Millisecond)
	}
	hits, cached := cacheMetrics(t, s)
	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	es, err := db.History(context.Background(), saved.ID, 100, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Trigger != "scheduled" || e.ReportID == "" || (e.Status != "complete" && e.Status != "partial") {
			t.Fatalf("entry %+v, want a scheduled re-audit that ran", e)
		}
	}
	// The CLI's audit, then one per recorded re-audit.
	if got, want := plainHits(site, "/js-title.html"), 1+len(es); got != want {
		t.Errorf("the site saw %d plain requests, want %d (the CLI's and one per recorded re-audit)", got, want)
	}
	if got, want := reportRows(t, db), 1+len(es); got != want {
		t.Errorf("%d report rows stored, want %d (the CLI's and one per recorded re-audit)", got, want)
	}
	if hits != cached {
		t.Errorf("lekta_cache_hits_total %v, but lekta_submissions_total{outcome=\"cached\"} %v", hits, cached)
	}
}

// plainHits counts the plain lane's requests for path at shop.example.
func plainHits(site *testsite.Site, path string) int {
	n := 0
	for _, h := range site.HitsOf("shop.example", path) {
		if strings.Contains(h.UserAgent, "compatible; LektaBot") {
			n++
		}
	}
	return n
}

// reportRows counts the reports kept in the records database, references
// to cached results included.
func reportRows(tb testing.TB, db *records.DB) int {
	tb.Helper()
	var n int
	if err := db.SQL().QueryRow("SELECT count(*) FROM reports").Scan(&n); err != nil {
		tb.Fatalf("count reports: %v", err)
	}
	return n
}

// cacheMetrics reads lekta_cache_hits_total and the sum of
// lekta_submissions_total{outcome="cached"} from /metrics.
func cacheMetrics(tb testing.TB, s *served) (hits, cached float64) {
	tb.Helper()
	resp, b := s.do("GET", "/metrics", "", nil)
	if resp.StatusCode != 200 {
		tb.Fatalf("/metrics: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := sc.Text()
		name, val, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		switch {
		case name == "lekta_cache_hits_total":
			hits = v
		case strings.HasPrefix(name, "lekta_submissions_total{") && strings.Contains(name, `outcome="cached"`):
			cached += v
		}
	}
	return hits, cached
}
