package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Fetch limits for robots.txt.
const (
	// RobotsFetchTimeout caps one robots.txt read, redirects included, when
	// the caller's context allows longer.
	RobotsFetchTimeout = 10 * time.Second
	// RobotsMaxRedirects is how many redirects a robots.txt read follows
	// (RFC 9309 §2.3.1.2 asks for at least five).
	RobotsMaxRedirects = 5
)

// RobotsOutcome is how reading robots.txt ended.
type RobotsOutcome string

// The outcomes of FetchRobots.
const (
	// RobotsFetched: a 2xx answer; its rules apply.
	RobotsFetched RobotsOutcome = "fetched"
	// RobotsNotFound: a 4xx answer other than 429 (404 included); no restrictions.
	RobotsNotFound RobotsOutcome = "not_found"
	// RobotsUnreachable: 429, 5xx, another unexpected status, a timeout, a
	// network error, a refused redirect or too many redirects; nothing may be
	// fetched and the audit is reported as skipped.
	RobotsUnreachable RobotsOutcome = "unreachable"
)

// Words is the outcome as people read it ("not found, so no
// restrictions"); the JSON keeps the value ("not_found").
func (o RobotsOutcome) Words() string {
	switch o {
	case RobotsFetched:
		return "read"
	case RobotsNotFound:
		return "not found, so no restrictions"
	case RobotsUnreachable:
		return "could not be read"
	}
	return strings.ReplaceAll(string(o), "_", " ")
}

// RobotsFetchConfig is how FetchRobots reaches the network.
type RobotsFetchConfig struct {
	// Transport sends each request, one per hop; in production the SSRF
	// guard's transport. Required: FetchRobots never falls back to a default.
	Transport http.RoundTripper
	// CheckURL vets every URL before it is requested, the first one and each
	// redirect target; in production the guard's CheckURL. nil checks nothing.
	CheckURL func(*url.URL) error
	// Timeout caps the whole read, redirects included; RobotsFetchTimeout
	// when zero. The caller's context deadline applies as well.
	Timeout time.Duration
	// Logger receives one debug record per hop; nil discards.
	Logger *slog.Logger
}

// RobotsResult is what reading an origin's robots.txt gave. Whatever host
// the redirects led to, the rules apply to the origin that was asked for.
type RobotsResult struct {
	// URL is the origin's robots.txt URL, the first one requested.
	URL string
	// Hops are the URLs requested in order, URL first; one request each.
	Hops []string
	// Outcome is fetched, not_found or unreachable.
	Outcome RobotsOutcome
	// HTTPStatus is the last response's status, 0 when there was none.
	HTTPStatus int
	// Size is the number of body bytes read: at most RobotsMaxBytes+1,
	// which means the file is larger than the limit.
	Size int
	// Robots holds the parsed rules when Outcome is fetched, else nil.
	Robots *Robots
	// Reason says in a sentence for people why the outcome is not_found or
	// unreachable; "" when fetched.
	Reason string
	// Err wraps ErrRobotsUnreachable and the cause when Outcome is
	// unreachable; nil otherwise. It may hold internal detail; show Reason.
	Err error
}

// Decide applies the result to a path: the parsed rules when fetched, no
// restrictions when not_found, and for unreachable a disallowing Decision
// with Err (wrapping ErrRobotsUnreachable): the caller skips the audit.
func (r RobotsResult) Decide(token, pathQuery string) (Decision, error) {
	return r.decide(token, SpellTarget(pathQuery))
}

// DecideURL is Decide for an absolute URL, as Robots.DecideURL.
func (r RobotsResult) DecideURL(token string, u *url.URL) (Decision, error) {
	return r.decide(token, RequestTarget(u))
}

func (r RobotsResult) decide(token, target string) (Decision, error) {
	switch r.Outcome {
	case RobotsFetched:
		if r.Robots == nil {
			return Decision{Basis: BasisUnreachable}, fmt.Errorf("%w: fetched result without rules", ErrRobotsUnreachable)
		}
		return r.Robots.decide(token, target), nil
	case RobotsNotFound:
		return Decision{Allowed: true, Basis: BasisNotFound}, nil
	}
	err := r.Err
	if err == nil {
		err = ErrRobotsUnreachable
	}
	return Decision{Allowed: false, Basis: BasisUnreachable}, err
}

// RobotsURL returns the robots.txt URL of origin's scheme, host and port.
// Errors wrap ErrInvalidURL.
func RobotsURL(origin *url.URL) (*url.URL, error) {
	scheme := strings.ToLower(origin.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("robots.txt URL: %w: scheme %q is not http or https", ErrInvalidURL, origin.Scheme)
	}
	if origin.Host == "" {
		return nil, fmt.Errorf("robots.txt URL: %w: no host", ErrInvalidURL)
	}
	return &url.URL{Scheme: scheme, Host: origin.Host, Path: "/robots.txt"}, nil
}

// FetchRobots reads origin's /robots.txt under RFC 9309 §2.3: exactly one
// request per hop and no retries; redirects followed up to
// RobotsMaxRedirects, each target checked by cfg.CheckURL first; 2xx parsed
// (at most RobotsMaxBytes read); 4xx other than 429 mean no restrictions;
// everything else is unreachable. It never returns a nil-rule fetched result.
func FetchRobots(ctx context.Context, cfg RobotsFetchConfig, origin *url.URL, userAgent string) RobotsResult {
	var res RobotsResult
	target, err := RobotsURL(origin)
	if err != nil {
		return res.unreachable("the origin is not an http(s) URL", err)
	}
	res.URL = target.String()
	if cfg.Transport == nil {
		return res.unreachable("no transport configured", errors.New("fetch robots.txt: nil Transport"))
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = RobotsFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	for hop := 0; ; hop++ {
		if cfg.CheckURL != nil {
			if err := cfg.CheckURL(target); err != nil {
				return res.unreachable(fmt.Sprintf("robots.txt URL %s refused: %v", target, err), err)
			}
		}
		res.Hops = append(res.Hops, target.String())
		resp, err := getRobots(ctx, cfg.Transport, target, userAgent)
		if err != nil {
			return res.unreachable(describeFetchError(ctx, err, timeout, "robots.txt"), err)
		}
		res.HTTPStatus = resp.StatusCode
		logger.DebugContext(ctx, "robots.txt hop", "url", target.String(), "status", resp.StatusCode)
		if !isRedirect(resp.StatusCode) {
			return res.finish(ctx, resp, timeout)
		}
		resp.Body.Close()
		next, err := redirectTarget(target, resp)
		switch {
		case err != nil:
			return res.unreachable(fmt.Sprintf("robots.txt answered %s without a usable http(s) Location",
				statusText(resp.StatusCode)), err)
		case hop == RobotsMaxRedirects:
			return res.unreachable(fmt.Sprintf("robots.txt redirected more than %d times", RobotsMaxRedirects),
				errors.New("too many redirects"))
		}
		next.Fragment, next.RawFragment = "", ""
		for _, h := range res.Hops {
			if h == next.String() {
				return res.unreachable(fmt.Sprintf("robots.txt redirects loop back to %s", next), errors.New("redirect loop"))
			}
		}
		target = next
	}
}

// getRobots sends one GET for u.
func getRobots(ctx context.Context, rt http.RoundTripper, u *url.URL, userAgent string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("User-Agent", userAgent)
	return rt.RoundTrip(req)
}

// redirectTarget resolves a redirect's Location against the URL requested.
func redirectTarget(base *url.URL, resp *http.Response) (*url.URL, error) {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, errors.New("redirect without Location")
	}
	next, err := base.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("redirect location: %w", err)
	}
	if next.Scheme != "http" && next.Scheme != "https" {
		return nil, fmt.Errorf("redirect location: scheme %q is not http or https", next.Scheme)
	}
	return next, nil
}

// finish turns a final, non-redirect response into the result and closes it.
func (res RobotsResult) finish(ctx context.Context, resp *http.Response, timeout time.Duration) RobotsResult {
	defer resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code <= 299:
		body, err := io.ReadAll(io.LimitReader(resp.Body, RobotsMaxBytes+1))
		res.Size = len(body)
		if err != nil {
			return res.unreachable(describeFetchError(ctx, err, timeout, "the robots.txt body"), err)
		}
		res.Outcome = RobotsFetched
		res.Robots = ParseRobots(body)
		return res
	case code >= 400 && code <= 499 && code != http.StatusTooManyRequests:
		res.Outcome = RobotsNotFound
		res.Reason = fmt.Sprintf("robots.txt answered %s, which means no restrictions", statusText(code))
		return res
	}
	return res.unreachable("robots.txt answered "+statusText(code), fmt.Errorf("status %d", code))
}

// unreachable marks res unreachable with a reason for people and a cause.
func (res RobotsResult) unreachable(reason string, cause error) RobotsResult {
	res.Outcome = RobotsUnreachable
	res.Reason = reason
	res.Robots = nil
	res.Err = fmt.Errorf("fetch robots.txt: %w: %w", ErrRobotsUnreachable, cause)
	return res
}

// describeFetchError says what went wrong with a request for what, in words
// that leave out addresses and other internals.
func describeFetchError(ctx context.Context, err error, timeout time.Duration, what string) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return "reading " + what + " was canceled"
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) ||
		(errors.As(err, &netErr) && netErr.Timeout()):
		return fmt.Sprintf("%s did not arrive in time (LektaBot waits at most %s)", what, timeout)
	case errors.Is(err, ErrBlockedAddress):
		return what + " is on an address LektaBot may not connect to"
	case errors.Is(err, syscall.ECONNREFUSED):
		return what + " could not be fetched: connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return what + " could not be fetched: connection reset"
	case errors.As(err, &dnsErr):
		return what + " could not be fetched: the host name does not resolve"
	}
	return what + " could not be fetched: network error"
}

// isRedirect reports whether code is a redirect that carries a new location.
func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// statusText formats a status as "HTTP 503 Service Unavailable".
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("HTTP %d %s", code, t)
	}
	return fmt.Sprintf("HTTP %d", code)
}
