package render

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/chromedp/chromedp"
)

// chromedpDisabledFeatures is the --disable-features value of
// chromedp.DefaultExecAllocatorOptions (v0.23). Chromium honours only the
// last --disable-features flag, so ours must repeat these names.
const chromedpDisabledFeatures = "Translate,BlinkGenPropertyTrees"

// disabledFeatures are the Chromium features the render lane turns off.
var disabledFeatures = []string{
	// Each new window spins a renderer for the address-bar popup
	// (chrome://omnibox-popup.top-chrome/): 0.7-1 core per window, halved
	// CPU per audit when off (measured, Chromium 156). Names change between
	// versions; Start checks that no popup target appears.
	"WebUIOmniboxPopup",
	"WebUIOmniboxAimPopup",
	"WebUIOmniboxFullPopup",
	// A spare renderer per context costs ≈0.2 CPU-s per audit.
	"SpareRendererForSitePerProcess",
	// Site isolation off: cross-site iframes stay in the page's process, so
	// the page's Fetch interception (image/font/media/analytics blocking,
	// robots checks, the user agent) covers them too; with isolation on,
	// they run as separate targets that load unfiltered. Each audit still
	// has its own browser context (no cookies, storage or service workers
	// carry over), and every connection goes through the guarded proxy.
	"IsolateOrigins",
	"SitePerProcess",
}

// jsHeapMB caps each renderer's V8 heap so runaway allocation crashes the
// tab (reported as ErrPageCrashed) long before it threatens the machine.
const jsHeapMB = 512

// hostResolverRules makes every name lookup inside Chromium fail, except
// the proxy's own address: a backstop in case traffic ever bypasses the
// proxy (which resolves names itself, through the guard).
const hostResolverRules = "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"

// allocatorOptions are the chromedp allocator options for Chromium at
// execPath with the default (deny-all) proxy at proxyAddr, trusting the
// certificates of the proxies' key spki (base64 SHA-256 of its SPKI).
func allocatorOptions(execPath, proxyAddr, spki string) []chromedp.ExecAllocatorOption {
	opts := append([]chromedp.ExecAllocatorOption(nil), chromedp.DefaultExecAllocatorOptions[:]...)
	for _, f := range extraFlags(proxyAddr, spki, os.Geteuid() == 0) {
		opts = append(opts, chromedp.Flag(f.name, f.value))
	}
	return append(opts, chromedp.ExecPath(execPath))
}

type flag struct {
	name  string
	value any // string, or bool (false removes the flag)
}

// extraFlags are the flags on top of chromedp's defaults.
func extraFlags(proxyAddr, spki string, root bool) []flag {
	return []flag{
		// chromedp turns popup blocking off; window.open floods must stay blocked.
		{"disable-popup-blocking", false},
		// No new window, tab or popup is ever created, however the page
		// asks (window.open, a target="_blank" link or form, a gesture):
		// none of them loads anything. The headless shell honours it;
		// another browser's popups are closed when their target appears.
		{"block-new-web-contents", true},
		// Chromium refuses to start as root with its sandbox; a production
		// deployment runs it as its own user and keeps the sandbox (SECURITY.md).
		{"no-sandbox", root},
		{"disable-background-networking", true},
		{"disable-component-update", true},
		{"disable-domain-reliability", true},
		{"disable-sync", true},
		{"no-first-run", true},
		{"no-pings", true},
		{"deny-permission-prompts", true},
		{"disable-gpu", true},
		// No WebGL, as in Google's renderer (refusals.go).
		{"disable-3d-apis", true},
		{"disable-quic", true},
		{"disable-features", chromedpDisabledFeatures + "," + strings.Join(disabledFeatures, ",")},
		{"disable-site-isolation-trials", true},
		// In the browser --force-webrtc-ip-handling-policy does not stop
		// STUN and this does; in the headless shell, which has no such
		// preference, only the force flag does. Both, for either binary.
		{"webrtc-ip-handling-policy", "disable_non_proxied_udp"},
		{"force-webrtc-ip-handling-policy", "disable_non_proxied_udp"},
		{"proxy-server", "http://" + proxyAddr},
		// Without <-loopback> Chromium sends loopback traffic around the proxy.
		{"proxy-bypass-list", "<-loopback>"},
		{"host-resolver-rules", hostResolverRules},
		// The proxy terminates TLS with certificates of one key made at
		// start (mitm.go); the browser accepts exactly that key. Chromium
		// honours this flag only with --user-data-dir, which chromedp sets.
		{"ignore-certificate-errors-spki-list", spki},
		{"js-flags", fmt.Sprintf("--max-old-space-size=%d", jsHeapMB)},
		{"window-size", "1280,800"},
	}
}

// browserNames are the binaries searched when Options.ExecPath is empty, in
// order. Chromium's headless shell comes first: the same Blink and V8 as
// the browser, without its windows, tabs and address bar, so a browser
// context costs about a third of the browser's CPU and an audit about
// half (measured, Chromium 156). Debian installs it as
// /usr/lib/chromium/chromium-headless-shell behind a wrapper script that
// does not exec it, so that path comes before the wrapper's name: the
// browser's process must be the one started, for the peer check and for
// telling a crash.
var browserNames = []string{
	"/usr/lib/chromium/chromium-headless-shell", "chromium-headless-shell", "chrome-headless-shell",
	"chromium", "chromium-browser", "google-chrome",
}

// BrowserNames are the binaries FindBrowser searches when no path is given,
// in the order it tries them, for help texts that must say the same.
func BrowserNames() []string { return slices.Clone(browserNames) }

// FindBrowser resolves the browser binary: execPath when given, else the
// first of browserNames found. It starts nothing; errors wrap
// ErrBrowserMissing.
func FindBrowser(execPath string) (string, error) {
	if execPath != "" {
		p, err := exec.LookPath(execPath)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %w", ErrBrowserMissing, execPath, err)
		}
		return p, nil
	}
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: none of %s found", ErrBrowserMissing, strings.Join(browserNames, ", "))
}
