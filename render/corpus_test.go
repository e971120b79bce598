package render

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/corpus"
)

// corpusOnce registers the framework corpus on the shared test site.
var corpusOnce sync.Once

// mustCorpus returns the shared browser and site serving the corpus.
func mustCorpus(tb testing.TB) (*Browser, *site, *corpus.Corpus) {
	tb.Helper()
	b, s := mustBrowser(tb)
	c := corpus.Shared(tb)
	corpusOnce.Do(func() {
		mux := http.NewServeMux()
		c.Register(mux)
		s.hosts.Store(mux)
	})
	return b, s, c
}

// view is what a crawler reads of a rendered page: the words, the links
// and the head fields. Two complete renders of a page have the same view.
func view(s *compare.Snapshot) string {
	p := compare.Extract(s)
	var links []string
	for _, l := range p.Links {
		links = append(links, l.Href)
	}
	slices.Sort(links)
	var headings []string
	for _, h := range p.Headings {
		headings = append(headings, h.Text)
	}
	loading := ""
	if strings.Contains(templates.ReplaceAllString(string(s.Body), ""), "Loading") {
		loading = " (Loading… shown)"
	}
	return fmt.Sprintf("final=%s title=%q description=%q canonical=%q headings=%q ld=%v words=%d links=%v%s",
		s.FinalURL, p.Title, p.MetaDescription, p.Canonical, headings, p.JSONLDTypes, p.WordCount, links, loading)
}

// templates matches <template> elements, whose content is inert.
var templates = regexp.MustCompile(`(?s)<template.*?</template>`)

// busyLoops keeps every core busy until stop is called.
func busyLoops() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			for n := 0; ; n++ {
				if n%1_000_000 == 0 {
					select {
					case <-done:
						return
					default:
					}
				}
			}
		})
	}
	return func() { close(done); wg.Wait() }
}

// TestCorpusRenderComplete renders every corpus page several times, two at
// a time, with a busy loop on every core beside it, and asserts that each
// render reads the same words, links and head fields, and that none was
// taken while the app still showed its loading state (issue 32: React
// Router's <Navigate replace> followed by the route's fetch was snapshotted
// mid-way). LEKTA_CORPUS_RUNS sets the runs per page (default 2).
func TestCorpusRenderComplete(t *testing.T) {
	b, _, c := mustCorpus(t)
	runs := 2
	if n, err := strconv.Atoi(os.Getenv("LEKTA_CORPUS_RUNS")); err == nil && n > 0 {
		runs = n
	}
	stop := busyLoops()
	defer stop()
	var urls []string
	for _, p := range c.Pages() {
		urls = append(urls, p.URL())
	}
	views := make([][]string, len(urls))
	settled := make([][]string, len(urls))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, u := range urls {
		views[i], settled[i] = make([]string, runs), make([]string, runs)
		for run := range runs {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				snap, err := b.Render(ctx, Request{URL: u})
				if err != nil {
					views[i][run] = "error: " + err.Error()
					return
				}
				views[i][run], settled[i][run] = view(snap), snap.Render.SettledBy
			})
		}
	}
	wg.Wait()
	identical := 0
	for i, u := range urls {
		same := true
		for run, v := range views[i] {
			if strings.Contains(v, "Loading") {
				t.Errorf("%s run %d: snapshot of the loading state (settled by %s): %s", u, run+1, settled[i][run], v)
				same = false
			}
			if v != views[i][0] {
				t.Errorf("%s run %d differs from run 1 (settled by %s, %s):\n  %s\n  %s", u, run+1, settled[i][run], settled[i][0], v, views[i][0])
				same = false
			}
		}
		if same {
			identical++
		}
	}
	t.Logf("%d of %d pages gave the same view in all %d runs under load", identical, len(urls), runs)
}
