package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"lekta.dev/lekta/internal/testsite"
)

// page is one kind of delayed content, in the order of the table, and
// the title the render lane sees once it has caught the late content.
type page struct {
	kind  string
	path  string // on http://shop.example
	title string
	// waitsOnSite: its late content waits for the site's answer (the
	// SPA's fetch, answered after 300 ms), so the page has a floor that
	// the bench measures (floor.go). Timers have none: the render lane
	// runs the page's clock ahead.
	waitsOnSite bool
}

var pages = []page{
	{"static", "/delayed/static.html", "Static article | Lekta Test Shop", false},
	{"spa", "/delayed/spa.html", "spa content | Lekta Test Shop", true},
	{"timer-1500", "/delayed/timer-1500.html", "timer-1500 content | Lekta Test Shop", false},
	{"timer-4000", "/delayed/timer-4000.html", "timer-4000 content | Lekta Test Shop", false},
	{"scroll", "/delayed/scroll.html", "scroll content | Lekta Test Shop", false},
	{"big-script", "/delayed/big-script.html", "big-script content | Lekta Test Shop", false},
	{"docsify", docsifyPath, docsifyTitle, false},
}

// staticPage is the page of the throughput and cold-start runs, spaPage
// the one of the throughput run at one renderer.
var staticPage, spaPage = pages[0], pages[1]

// bench is one run: the test site and a server of each build.
type bench struct {
	o          options
	site       *testsite.Site
	docsDir    string // the docsify kind's site, written at start
	base, next *server
	flags      []string // the site's --resolve and --allow-addr
	// floors are the measured floors of the pages that wait on the site.
	floors map[string]time.Duration
}

func newBench(ctx context.Context, o options) (*bench, error) {
	docsDir, err := writeDocsifySite(o.assets)
	if err != nil {
		return nil, err
	}
	site := testsite.New()
	site.Handle(docsifyPath, http.StripPrefix(docsifyPath, http.FileServer(http.Dir(docsDir))))
	resolve, allow := site.ResolveFlags("shop.example")
	b := &bench{o: o, site: site, docsDir: docsDir, floors: map[string]time.Duration{}}
	for _, p := range pages {
		if p.waitsOnSite {
			if b.floors[p.kind], err = measureFloor(ctx, o.chromium, "http://"+site.Listener.Addr().String()+p.path, p.title, 10); err != nil {
				b.close()
				return nil, err
			}
		}
	}
	for _, r := range resolve {
		b.flags = append(b.flags, "--resolve", r)
	}
	b.flags = append(b.flags, "--allow-addr", allow)
	if b.base, err = startServer(ctx, "base", o.base, 2, b.flags); err != nil {
		b.close()
		return nil, err
	}
	if b.next, err = startServer(ctx, "new", o.next, 2, b.flags); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *bench) close() {
	for _, s := range []*server{b.base, b.next} {
		if s != nil {
			s.stop()
		}
	}
	b.site.Close()
	os.RemoveAll(b.docsDir)
}

// pageURL is a unique URL of the test page, so no audit is a cache hit.
func pageURL(p page, build string, i int) string {
	return fmt.Sprintf("http://shop.example%s?bench=%s-%d", p.path, build, i)
}

// caught reports whether the report's render lane has the page's late
// title and link.
func caught(p page, r *report) bool {
	rp := r.Lanes.Render.Page
	if rp == nil || rp.Title != p.title {
		return false
	}
	return slices.ContainsFunc(rp.Links, func(l link) bool { return strings.HasSuffix(l.Href, "/products/"+p.kind+"-product.html") })
}

// measured is what one build did on one page.
type measured struct {
	times     []time.Duration // the reports' duration_ms
	answers   []answer        // as the API's client saw them
	caught    bool
	cpu       time.Duration // per audit
	settledBy map[string]int
}

// warm audits each kind, interleaving the builds round by round.
func (b *bench) warm(ctx context.Context, out io.Writer) error {
	fmt.Fprintf(out, "warm audits, %d per page and build, interleaved (base = %s)\n\n", b.o.rounds, b.o.base)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "page\tbase p50\tnew p50\tnew/base\tcaught base/new\tCPU-s/audit base\tnew\tnew/base\tsettled_by (new)\t\n")
	var ratios []float64
	api := newAPITable(out)
	for _, p := range pages {
		res, err := b.warmPage(ctx, p)
		if err != nil {
			return err
		}
		api.add(p, b.floors[p.kind], res["base"], res["new"])
		bm, nm := median(res["base"].times), median(res["new"].times)
		ratio := float64(nm) / float64(bm)
		ratios = append(ratios, ratio)
		fmt.Fprintf(tw, "%s\t%v\t%v\t%.2f\t%s/%s\t%.3f\t%.3f\t%.2f\t%s\t\n", p.kind, bm, nm, ratio,
			yesNo(res["base"].caught), yesNo(res["new"].caught),
			res["base"].cpu.Seconds(), res["new"].cpu.Seconds(), res["new"].cpu.Seconds()/res["base"].cpu.Seconds(),
			counts(res["new"].settledBy))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nmedian new/base over the pages: %.2f\n", medianF(ratios))
	return api.flush()
}

// warmPage audits p b.o.rounds times on each build, after one warm-up,
// interleaving the builds round by round.
func (b *bench) warmPage(ctx context.Context, p page) (map[string]*measured, error) {
	res := map[string]*measured{"base": {settledBy: map[string]int{}}, "new": {settledBy: map[string]int{}}}
	for _, s := range []*server{b.base, b.next} { // warm-up
		if _, err := s.audit(ctx, pageURL(p, s.name, -1)); err != nil {
			return nil, err
		}
	}
	cpu0 := map[string]time.Duration{"base": b.base.cpu(), "new": b.next.cpu()}
	for i := range b.o.rounds {
		order := []*server{b.base, b.next}
		if i%2 == 1 {
			order = []*server{b.next, b.base}
		}
		for _, s := range order {
			a, err := s.audit(ctx, pageURL(p, s.name, i))
			if err != nil {
				return nil, err
			}
			m := res[s.name]
			m.times = append(m.times, time.Duration(a.DurationMS)*time.Millisecond)
			m.answers = append(m.answers, a)
			m.caught = (i == 0 || m.caught) && caught(p, a.report)
			m.settledBy[orDash(a.Lanes.Render.SettledBy)]++
		}
	}
	res["base"].cpu = (b.base.cpu() - cpu0["base"]) / time.Duration(b.o.rounds)
	res["new"].cpu = (b.next.cpu() - cpu0["new"]) / time.Duration(b.o.rounds)
	return res, nil
}

// coldStart times a cold `lekta audit` of each build (a fresh data dir, so
// nothing is cached, and no Chromium running) against a cold --dump-dom of
// the same page by the browser lekta renders with (the headless shell,
// unless -chromium names another), interleaved.
func (b *bench) coldStart(ctx context.Context, out io.Writer) error {
	if b.o.cold <= 0 {
		fmt.Fprintf(out, "\ncold start: skipped (-cold %d)\n", b.o.cold)
		return nil
	}
	page := "http://" + b.site.Listener.Addr().String() + staticPage.path
	times := map[string][]time.Duration{}
	for i := range b.o.cold {
		for _, c := range []struct{ name, bin string }{{"base", b.o.base}, {"new", b.o.next}, {"dump-dom", ""}} {
			dir, err := os.MkdirTemp("", "lekta-bench-cold-")
			if err != nil {
				return err
			}
			var cmd *exec.Cmd
			if c.bin == "" {
				args := []string{"--headless", "--user-data-dir=" + dir, "--dump-dom", page}
				for _, f := range quietFlags {
					args = append(args, "--"+f)
				}
				cmd = exec.CommandContext(ctx, b.o.chromium, args...)
			} else {
				args := append([]string{"audit", "--json", "--data-dir", dir}, b.flags...)
				cmd = exec.CommandContext(ctx, c.bin, append(args, pageURL(staticPage, "cold", i))...)
			}
			start := time.Now()
			outb, err := cmd.CombinedOutput()
			took := time.Since(start)
			os.RemoveAll(dir)
			if err != nil {
				return fmt.Errorf("cold %s: %w: %.500s", c.name, err, outb)
			}
			times[c.name] = append(times[c.name], took)
		}
	}
	d := median(times["dump-dom"])
	fmt.Fprintf(out, "\ncold start (new process, no Chromium running), median of %d: lekta audit base %v, new %v, new/base %.2f; %s --dump-dom %v; new/dump-dom %.2f, base/dump-dom %.2f\n",
		b.o.cold, median(times["base"]), median(times["new"]), float64(median(times["new"]))/float64(median(times["base"])),
		b.o.chromium, d, float64(median(times["new"]))/float64(d), float64(median(times["base"]))/float64(d))
	return nil
}

func median(ds []time.Duration) time.Duration { return quantile(ds, 1, 2) }
func p90(ds []time.Duration) time.Duration    { return quantile(ds, 9, 10) }

// quantile is the num/den quantile of ds, to the millisecond.
func quantile(ds []time.Duration, num, den int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)*num/den].Round(time.Millisecond)
}

// quietFlags keep a browser the bench starts off this closed network's
// services (it stalls on them otherwise), for --dump-dom and the floor.
var quietFlags = []string{"no-sandbox", "disable-gpu", "disable-background-networking",
	"disable-component-update", "disable-sync", "no-first-run"}

func medianF(fs []float64) float64 {
	s := slices.Clone(fs)
	slices.Sort(s)
	return s[len(s)/2]
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// counts writes a tally such as "idle 10" or "budget 9, deadline 1".
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
