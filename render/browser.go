package render

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"

	"lekta.dev/lekta/compare"
)

// ErrBrowserMissing: no Chromium binary was found.
var ErrBrowserMissing = errors.New("chromium not found (install the Debian package \"chromium\" or pass --chromium PATH)")

// Options configure the browser.
type Options struct {
	// ExecPath is the browser binary; "" searches chromium, chromium-browser, google-chrome on PATH.
	ExecPath string
	// Dial makes every connection of the browser (through the in-process proxy).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// CheckURL validates every main-frame navigation target.
	CheckURL func(u *url.URL) error
	// UASuffix is appended to the browser's own user agent, e.g. " LektaBot/0.1 (+https://lekta.dev/bot)".
	UASuffix string
	Logger   *slog.Logger
}

// Request is one render.
type Request struct {
	URL string
	// AllowSameOrigin is asked for every request to the page's own origin
	// (subresources included); a false answer blocks it with reason "robots".
	AllowSameOrigin func(u *url.URL) (allowed bool, rule string)
}

// Browser is one Chromium process serving renders.
type Browser struct{}

// Start launches the browser.
func Start(ctx context.Context, opts Options) (*Browser, error) { return &Browser{}, nil }

// UserAgent is the user agent renders send.
func (b *Browser) UserAgent() string { return "" }

// Render loads req.URL in a fresh browser context and returns the settled DOM.
func (b *Browser) Render(ctx context.Context, req Request) (*compare.Snapshot, error) {
	return nil, errors.New("not implemented")
}

// Close stops the browser.
func (b *Browser) Close() error { return nil }
