package main

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
)

// outageLength is how long TestFleetRedisOutageKeepsEveryAudit keeps
// Redis down: 20 s in make test; LEKTA_TEST_OUTAGE=10m measures the issue's
// ten minutes, longer than River's five attempts last (about 6 minutes).
func outageLength(t *testing.T) time.Duration {
	d := 20 * time.Second
	if v := os.Getenv("LEKTA_TEST_OUTAGE"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("LEKTA_TEST_OUTAGE=%q: %v", v, err)
		}
	}
	return d
}

// TestFleetRedisOutageKeepsEveryAudit runs lekta serve on PostgreSQL and a
// Redis of its own, with three audits accepted and queued behind one held
// at the site, then kills Redis for the outage's length and starts it
// again (empty). Every accepted audit completes after it, and from the
// site's log each queued host was fetched once, after Redis came back.
func TestFleetRedisOutageKeepsEveryAudit(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	hosts := []string{"shop.example", "q1.example", "q2.example", "q3.example"}
	red := redistest.StartPrivate(t)
	resolve, allow := site.ResolveFlags(hosts...)
	args := []string{"--database-url", pgtest.Database(t), "--secrets-key-file", sharedSecretsKey(t), "--redis-url", red.URL(),
		"--allow-addr", allow, "--renderers", "1", "--timeout", "30s", "--rate", "1/1s,100/1h", "--data-dir", t.TempDir()}
	for _, r := range resolve {
		args = append(args, "--resolve", r)
	}
	a := startServeProc(t, h, args...)
	entered, release := site.Hold(t, "/held.html")
	defer release()
	resp, body := a.postAPI("http://shop.example/held.html")
	servePendingID(t, resp, body)
	waitClosed(t, entered, "the held audit reaching its page", a)
	var queued []string
	for _, host := range hosts[1:] {
		resp, body := a.postAPI("http://" + host + "/index.html")
		queued = append(queued, servePendingID(t, resp, body))
	}

	outage := outageLength(t)
	red.Kill()
	release() // the renderer is free: the queued audits' starts meet the outage
	time.Sleep(outage)
	red.Start(t)
	back := time.Now()

	for i, id := range queued {
		if r := reportAfterOutage(t, a, id); r.Status != audit.StatusComplete {
			t.Errorf("audit of %s accepted before a %v Redis outage: %s (%s), want complete", hosts[i+1], outage, r.Status, r.Reason)
		}
	}
	for _, host := range hosts[1:] {
		hits := site.HitsOf(host, "/robots.txt")
		if len(hits) != 1 || hits[0].Start.Before(back) {
			t.Errorf("%s: robots.txt read %d times (%v), want once, after Redis came back", host, len(hits), starts(hits))
			continue
		}
		t.Logf("figure: %s fetched %s after Redis came back from a %v outage", host, hits[0].Start.Sub(back).Round(10*time.Millisecond), outage)
	}
	if err := a.stop(); err != nil {
		t.Errorf("stop: %v\n%s", err, a.stderr)
	}
}

// starts are the hits' times, for messages.
func starts(hits []testsite.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Start.Format("15:04:05.000"))
	}
	return out
}

// reportAfterOutage polls the audit id as a client does: 202 and a 503
// with Retry-After (the first reads after Redis returns may meet the
// connections it closed) mean ask again; it fails on anything else or
// after three minutes.
func reportAfterOutage(t *testing.T, s *served, id string) *audit.Report {
	t.Helper()
	for end := time.Now().Add(3 * time.Minute); time.Now().Before(end); {
		resp, b := s.do("GET", "/api/v1/audits/"+id+"?wait=10s", "", nil)
		switch {
		case resp.StatusCode == http.StatusOK:
			var r audit.Report
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("report %s: %v", id, err)
			}
			return &r
		case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
			time.Sleep(time.Second)
		case resp.StatusCode != http.StatusAccepted:
			t.Fatalf("GET audit %s: %d %s", id, resp.StatusCode, b)
		}
	}
	t.Fatalf("audit %s did not finish within 3 minutes of Redis coming back", id)
	return nil
}
