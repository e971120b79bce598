package render

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
)

// Target is one CDP target of the running browser: a page, an iframe or
// worker with its own target, or a service worker.
type Target struct {
	ID   string
	Type string // "page", "iframe", "worker", "service_worker", ...
	URL  string
	// BrowserContextID is the browser context (one per audit) the target
	// belongs to.
	BrowserContextID string
}

// Targets lists the running browser's targets, for leak checks and
// diagnostics. Between renders there are two pages: the default context's
// blank page and the page of the browser context prepared for the next
// render (once it is ready). Targets never starts a browser; after Close,
// or while no browser runs, it returns ErrClosed.
func (b *Browser) Targets(ctx context.Context) ([]Target, error) {
	b.mu.Lock()
	in := b.inst
	b.mu.Unlock()
	if in == nil || in.dead() {
		return nil, ErrClosed
	}
	res, err := cdp.Call(ctx, in.cdp, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, fmt.Errorf("list targets: %w", err)
	}
	out := make([]Target, 0, len(res.TargetInfos))
	for _, ti := range res.TargetInfos {
		out = append(out, Target{
			ID: string(ti.TargetID), Type: ti.Type, URL: ti.URL,
			BrowserContextID: string(ti.BrowserContextID),
		})
	}
	return out, nil
}
