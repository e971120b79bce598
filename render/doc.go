// Package render is the render lane: the page as headless Chromium shows
// it, under the same bot identity as the plain lane.
//
// One Chromium runs per process (Start); each Render gets a fresh browser
// context (no cookies, storage or service workers carry over), prepared in
// the background while the previous render runs. Every connection of a
// context goes through an in-process forward proxy of its own (proxy.go)
// that dials through Options.Dial, the SSRF guard, and counts the audit's
// requests and bytes against a budget; Chromium's own background traffic
// meets a proxy that refuses everything, and a host-resolver rule that
// resolves nothing is the backstop.
//
// The proxy terminates the TLS of every tunnel with a certificate of its
// own (mitm.go) and verifies the site's certificate itself, so it sees
// every request of the context in the clear — page, frames, dedicated,
// shared and service workers alike — and applies the lane's rules to each
// (rules.go): only GET and HEAD (and CORS preflights for them) leave; no
// Cookie, Authorization or Proxy-Authorization header leaves, no
// Set-Cookie or authentication challenge comes back; the User-Agent is the
// lane's; robots.txt for the page's origin; at most 5 redirects per request
// chain; images, media and fonts refused by Sec-Fetch-Dest and by response
// Content-Type; prefetches refused.
//
// Inside the page, Fetch interception refuses images, media, fonts,
// beacons, requests to analytics and advertising hosts (trackerHosts),
// same-origin requests robots.txt disallows (Request.AllowSameOrigin),
// form submissions, <object>, <embed> and <iframe> of image or media
// files, main-frame navigations and redirect hops that Options.CheckURL
// refuses or that pass the caps (MaxNavigations after the first,
// MaxRedirects hops), and frame documents past MaxFrameLoads. Dialogs
// are dismissed, no popup is ever created (--block-new-web-contents;
// closed should one appear in another browser), downloads are denied and
// service workers bypassed for the page.
//
// A render ends when the page has no more work to do (settle.go): page
// time runs virtually, standing still while requests are in flight and
// jumping to the next timer otherwise, within a budget of page time
// (Options.Budget, 5 s); a script installed at document start counts what
// the page has scheduled (timers, intervals, animation frames, idle
// callbacks, observers, messages it posts to itself), the viewport is
// tall (Options.ViewportHeight) so lazy sections are in view, and a frame
// is rendered whenever the page changed so layout-triggered callbacks run. The snapshot says why the
// render stopped (SettledBy: idle, budget, deadline, request_budget) and
// how much page time the page used. Options.SettleTimeout and the caller's
// deadline cap the wall time. Render then serializes the DOM, open shadow
// roots included, into a compare.Snapshot with what the lane saw: the main
// document's status, headers, redirects and timings, blocked requests by
// reason, console errors, uncaught exceptions and failed requests.
//
// A page that never yields, exhausts its memory or crashes ends the render
// with ErrRenderTimeout or ErrPageCrashed and its context is disposed of;
// a Chromium that dies ends the render with ErrBrowserCrashed and the next
// Render starts a new one.
package render
