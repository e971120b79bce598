package main

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The floor of a page whose late content waits for the site (the SPA's
// fetch answered after 300 ms) is the least time any renderer needs to
// see that content: a warm browser of its own, the headless shell lekta
// renders with, loads the page in a new browser context, and the page's
// own clock (performance.now(), from the navigation's start) says when
// its title became the late title. A renderer cannot beat it; what an
// audit adds on top (the plain lane, settling, the snapshot, the store,
// the answer) is the client's cost over the floor.

// floorScript notes, before the page's own scripts run, the page time at
// which its title first reads title.
const floorScript = `(() => {
	const want = %q;
	const note = () => { if (document.title === want && window.__lektaFloor === undefined) window.__lektaFloor = performance.now(); };
	new MutationObserver(note).observe(document, {subtree: true, childList: true, characterData: true});
})();`

// measureFloor loads url n times, each in a new browser context of one
// warm browser (execPath), and returns the median time to title.
func measureFloor(ctx context.Context, execPath, url, title string, n int) (time.Duration, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(execPath))
	for _, f := range quietFlags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, cancel := chromedp.NewExecAllocator(ctx, opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(bctx); err != nil {
		return 0, fmt.Errorf("floor: start %s: %w", execPath, err)
	}
	var times []time.Duration
	for i := range n + 1 { // the first load warms the browser up
		tctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
		tctx, cancelT := context.WithTimeout(tctx, 30*time.Second)
		err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, cdppage.AddScriptToEvaluateOnNewDocument,
				cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(floorScript, title)})
			return err
		}), chromedp.Navigate(fmt.Sprintf("%s?floor=%d", url, i)))
		var ms float64
		if err == nil {
			ms, err = chromedp.Run(tctx, chromedp.Poll[float64](`window.__lektaFloor`, chromedp.WithPollingInterval(10*time.Millisecond)))
		}
		cancelT()
		cancel()
		if err != nil {
			return 0, fmt.Errorf("floor of %s: %w", url, err)
		}
		if i > 0 {
			times = append(times, time.Duration(ms*float64(time.Millisecond)))
		}
	}
	return median(times), nil
}
