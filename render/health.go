package render

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
)

// Ping checks that the browser answers CDP commands, starting a new
// Chromium first if the last one died (as the next Render would). It is
// what a readiness probe asks.
func (b *Browser) Ping(ctx context.Context) error {
	in, err := b.instance(ctx)
	if err != nil {
		return fmt.Errorf("ping browser: %w", err)
	}
	if _, err := cdp.Call(ctx, in.cdp, browser.GetVersion, cdp.Empty{}); err != nil {
		return fmt.Errorf("ping browser: %w", in.explain(ctx, err))
	}
	return nil
}

// ContextsInUse is the number of browser contexts serving renders right now.
func (b *Browser) ContextsInUse() int {
	return int(b.inUse.Load())
}
