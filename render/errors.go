package render

import "errors"

// Errors callers branch on. Render wraps them with the URL and the cause, so
// compare with errors.Is.
var (
	// ErrBrowserMissing: no Chromium binary was found.
	ErrBrowserMissing = errors.New("chromium not found (install the Debian package \"chromium-headless-shell\" or \"chromium\", or pass --chromium PATH)")
	// ErrBrowserCrashed: the Chromium process died during the render. The
	// next Render starts a new one.
	ErrBrowserCrashed = errors.New("browser crashed")
	// ErrPageCrashed: the page's renderer crashed (Inspector.targetCrashed),
	// for example after running out of memory, or the tab went away. The
	// browser itself keeps serving renders.
	ErrPageCrashed = errors.New("page crashed")
	// ErrRenderTimeout: the deadline passed before a DOM snapshot could be
	// taken, for example because page script never yields. It is reported
	// together with context.DeadlineExceeded when the caller's deadline hit.
	ErrRenderTimeout = errors.New("render timed out")
	// ErrNavigationFailed: the main document did not load (network error,
	// address refused by the guard, a download instead of a page). The error
	// wraps the dial error when the guard refused the connection.
	ErrNavigationFailed = errors.New("navigation failed")
	// ErrURLRefused: Options.CheckURL refused the URL to render or a
	// redirect hop of it; the error wraps CheckURL's error.
	ErrURLRefused = errors.New("url refused")
	// ErrBadLocation: a redirect of the page had a Location with a
	// backslash, a space or a control byte, which the lane refuses as the
	// plain lane does (plainget.ErrBadLocation, the same words).
	ErrBadLocation = errors.New("unusable redirect location")
	// ErrClosed: Render was called after Close.
	ErrClosed = errors.New("browser closed")
)
