// Command lekta-bench is `make bench`'s second half: it audits every test
// page N times with one warm browser and prints median and p90 per lane,
// next to a cold `chromium --headless --dump-dom` of the same page measured
// in the same run. The ratio is the figure that counts; absolute times on
// shared machines drift.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"text/tabwriter"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/render"
)

var pages = []string{
	"index.html", "js-title.html", "js-meta-description.html", "js-canonical.html",
	"noindex-added.html", "noindex-removed.html", "json-ld.html", "fetch-content.html",
	"links-added.html", "shadow.html", "spa.html", "images-analytics.html",
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "lekta-bench:", err)
		os.Exit(1)
	}
}

type sample struct{ plain, render, total []time.Duration }

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("lekta-bench", flag.ContinueOnError)
	n := fs.Int("n", 10, "warm audits per page")
	cold := fs.Int("cold", 3, "cold chromium --dump-dom runs per page")
	chromium := fs.String("chromium", "", "browser binary")
	budget := fs.Duration("budget", render.DefaultBudget, "page time a render grants the page (the product uses the default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	site := testsite.New()
	defer site.Close()
	guard, err := policy.NewGuard(site.GuardConfig())
	if err != nil {
		return err
	}
	id := policy.DefaultIdentity()
	browser, err := render.Start(ctx, render.Options{ExecPath: *chromium, Dial: guard.DialContext, CheckURL: guard.CheckURL, UASuffix: id.RenderSuffix(), Budget: *budget})
	if err != nil {
		return err
	}
	defer browser.Close()
	// The bench audits one host many times in a row: lift the per-host
	// windows, and make every URL distinct so none is answered from the cache.
	lim := cache.Defaults()
	lim.Windows = []cache.Window{{N: 1 << 20, Per: time.Minute}}
	store, err := cache.NewMemoryStore(lim, time.Now)
	if err != nil {
		return err
	}
	auditor, err := audit.New(audit.Config{Guard: guard, Renderer: browser, Store: store, Token: id.Token, PlainUA: id.PlainUA()})
	if err != nil {
		return err
	}
	bin, err := exec.LookPath(firstNonEmpty(*chromium, "chromium"))
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "page\tplain p50\tp90\trender p50\tp90\taudit p50\tp90\tcold dump-dom p50\taudit/cold\t\n")
	var ratios []float64
	for _, page := range pages {
		var s sample
		for i := range *n + 1 {
			u := fmt.Sprintf("http://shop.example/%s?bench=%d", page, i)
			rep, err := auditor.Audit(ctx, audit.Request{URL: u, Trigger: audit.TriggerCLI})
			if err != nil {
				return err
			}
			if !rep.Status.Ran() {
				return fmt.Errorf("%s: %s (%s)", page, rep.Status, rep.Reason)
			}
			if i == 0 {
				continue // warm-up
			}
			s.plain = append(s.plain, ms(rep.Lanes.Plain.DurationMS))
			s.render = append(s.render, ms(rep.Lanes.Render.DurationMS))
			s.total = append(s.total, ms(rep.DurationMS))
		}
		var dumps []time.Duration
		for range *cold {
			d, err := dumpDOM(ctx, bin, site.URL+"/"+page)
			if err != nil {
				return err
			}
			dumps = append(dumps, d)
		}
		ratio := float64(pct(s.total, 50)) / float64(pct(dumps, 50))
		ratios = append(ratios, ratio)
		fmt.Fprintf(tw, "%s\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%.2f\t\n", page,
			pct(s.plain, 50), pct(s.plain, 90), pct(s.render, 50), pct(s.render, 90),
			pct(s.total, 50), pct(s.total, 90), pct(dumps, 50), ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	slices.Sort(ratios)
	fmt.Fprintf(out, "\nmedian warm audit / cold dump-dom: %.2f (budget %s of page time)\n", ratios[len(ratios)/2], *budget)
	return nil
}

// dumpDOM times one cold headless Chromium printing the page's DOM.
func dumpDOM(ctx context.Context, bin, url string) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "lekta-bench-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--user-data-dir="+dir, "--dump-dom", url)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("dump-dom %s: %w: %s", url, err, out)
	}
	return time.Since(start), nil
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// pct is the p-th percentile (nearest rank) of ds.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)].Round(time.Millisecond)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
