package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/testsite"
)

// TestMultiProcessSQLite runs six `lekta audit` processes of one URL at
// once on one --data-dir and nothing else (no Redis, no flag but the data
// dir): the site sees exactly one audit (one robots.txt, one plain GET, one
// render) and every process prints its report; another URL of the host
// within the minute is refused (exit 3, retry_after_s); a repeat is answered
// from the cache without touching the site.
func TestMultiProcessSQLite(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	site.SetRobots("shop.example", http.StatusOK, "User-agent: *\nAllow: /\n")
	entered, release := site.Hold(t, "/held.html")
	env := []string{"LEKTA_DATA_DIR=" + t.TempDir()}
	const page, other = "http://shop.example/held.html", "http://shop.example/index.html"
	launch := func(name, u string) *lektaProc {
		return h.start(t, name, env, slices.Concat(siteArgs(site), []string{u}))
	}

	var procs []*lektaProc
	for _, name := range []string{"p1", "p2", "p3", "p4", "p5", "p6"} {
		procs = append(procs, launch(name, page))
	}
	select {
	case <-entered:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no process reached the page:\n%s", procs[0].stderr.String())
	}
	waitJoinedSQLite(t, procs, 5)
	release()

	var id, first string
	var ran, joined int
	for _, p := range procs {
		res := p.result(t)
		r := res.report
		if res.code != exitOK || r == nil || r.Status != audit.StatusComplete || r.Cached {
			t.Fatalf("%s: exit %d, report %+v\nstderr:\n%s", p.name, res.code, r, res.stderr)
		}
		if r.Joined {
			joined++
		} else {
			ran++
		}
		// Apart from joined, every process printed the same report.
		r.Joined = false
		b, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if id == "" {
			id, first = r.ID, string(b)
		}
		if string(b) != first {
			t.Errorf("%s printed report %s, unlike another process's %s", p.name, b, first)
		}
	}
	if ran != 1 || joined != 5 {
		t.Errorf("%d processes ran the audit and %d joined it, want 1 and 5", ran, joined)
	}

	wantRefused(t, "another URL of the host within the minute", launch("other", other).result(t), "(1/1m)")
	res := launch("repeat", page).result(t)
	if res.code != exitOK || res.report == nil || !res.report.Cached || res.report.ID == id || res.report.URL != page {
		t.Errorf("repeat: exit %d, report %+v; want the cached result of %s under an id of its own\nstderr:\n%s", res.code, res.report, id, res.stderr)
	}
	wantOneAuditOf(t, site, "shop.example", "/held.html")
	if n := len(site.HitsOf("shop.example", "/index.html")); n != 0 {
		t.Errorf("the refused URL was requested %d times", n)
	}
	if n := h.launchCount(t); n != 1 {
		t.Errorf("the processes started Chromium %d times, want 1 (only the one that ran the audit)", n)
	}
}

// waitJoinedSQLite waits until n of procs say on stderr that they wait for
// the running audit, which shows that they joined it rather than being
// answered later from the cache.
func waitJoinedSQLite(tb testing.TB, procs []*lektaProc, n int) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := 0
		for _, p := range procs {
			if strings.Contains(p.stderr.String(), "being audited already") {
				got++
			}
		}
		if got == n {
			return
		}
		for _, p := range procs {
			if p.exited() {
				tb.Fatalf("%s exited while the audit was held:\n%s\n%s", p.name, p.stdout.String(), p.stderr.String())
			}
		}
		if time.Now().After(deadline) || got > n {
			tb.Fatalf("%d processes joined, want %d", got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkCLICacheHitProcess runs `lekta audit --json` as a whole process
// (start, open the SQLite file, answer from the cache, print, exit) and
// reports the median and 90th percentile wall time per run; run it with
// -benchtime 20x for the median of 20. The first run fills the cache with a
// real audit; the benchmark fails if a later run starts Chromium or
// touches the site.
func BenchmarkCLICacheHitProcess(b *testing.B) {
	chromium := serveNeeds(b, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(b, chromium)
	site := testsite.Start(b)
	env := []string{"LEKTA_DATA_DIR=" + b.TempDir()}
	args := slices.Concat(siteArgs(site), []string{"http://shop.example/index.html"})
	if res := h.start(b, "fill", env, args).result(b); res.code != exitOK || res.report == nil {
		b.Fatalf("filling the cache: exit %d\n%s", res.code, res.stderr)
	}
	hits, launches := len(site.Hits()), h.launchCount(b)
	var walls []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		res := h.start(b, "cached", env, args).result(b)
		walls = append(walls, time.Since(start))
		if res.code != exitOK || res.report == nil || !res.report.Cached {
			b.Fatalf("run %d: exit %d, not a cached report\n%s", i, res.code, res.stderr)
		}
	}
	b.StopTimer()
	if n := len(site.Hits()) - hits; n != 0 {
		b.Fatalf("cached runs sent %d requests to the site", n)
	}
	if n := h.launchCount(b) - launches; n != 0 {
		b.Fatalf("cached runs started Chromium %d times", n)
	}
	slices.Sort(walls)
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(walls[len(walls)*9/10].Microseconds())/1000, "p90-ms")
}
