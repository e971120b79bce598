package plainget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// Defaults of Config.
const (
	DefaultMaxBody      = 15 << 20
	DefaultMaxRedirects = 5
)

// Errors the lane reports; the Snapshot returned with them holds what was
// received before the lane stopped.
var (
	// ErrTooManyRedirects: the chain went past MaxRedirects hops.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrRedirectLoop: a hop led back to a URL already in the chain.
	ErrRedirectLoop = errors.New("redirect loop")
	// ErrBadLocation: a redirect's Location header is missing or unusable.
	ErrBadLocation = errors.New("unusable redirect location")
	// ErrHopRefused: CheckHop refused a redirect hop (the cause is wrapped too).
	ErrHopRefused = errors.New("redirect hop refused")
	// ErrUnsupportedEncoding: a Content-Encoding the lane cannot decode.
	ErrUnsupportedEncoding = errors.New("unsupported content encoding")
)

// Config configures the plain lane.
type Config struct {
	// Transport makes every request; pass the SSRF guard's transport.
	Transport http.RoundTripper
	// UserAgent is sent with every request.
	UserAgent string
	// MaxBody caps the decoded body; default DefaultMaxBody.
	MaxBody int64
	// MaxRedirects caps the hops followed; default DefaultMaxRedirects.
	MaxRedirects int
	// CheckHop is asked before following a redirect to next; an error stops
	// the lane with ErrHopRefused. Nil allows every hop.
	CheckHop func(ctx context.Context, next *url.URL) error
	// Now is the clock for timings and Snapshot.FetchedAt; default time.Now.
	Now func() time.Time
	// Validators are sent on the first request only (never on a redirect
	// hop) to fetch conditionally: a 304 answer then ends the lane with
	// Status 304 and no body. A validator with a control byte or longer
	// than MaxValidator is not sent.
	Validators Validators
}

// MaxValidator is the longest validator the lane sends.
const MaxValidator = 1 << 10

// Validators are a previous response's validators for a conditional GET.
type Validators struct {
	// ETag goes in If-None-Match, LastModified in If-Modified-Since.
	ETag         string
	LastModified string
}

// header sets the conditional request headers of the usable validators.
func (v Validators) header(h http.Header) {
	if usableValidator(v.ETag) {
		h.Set("If-None-Match", v.ETag)
	}
	if usableValidator(v.LastModified) {
		h.Set("If-Modified-Since", v.LastModified)
	}
}

// usableValidator reports whether v may be sent: not empty, at most
// MaxValidator bytes, no control byte.
func usableValidator(v string) bool {
	return v != "" && len(v) <= MaxValidator &&
		!strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// keptHeaders are the response headers a Snapshot keeps.
var keptHeaders = []string{
	"Content-Type", "Content-Length", "Content-Encoding", "Content-Language",
	"X-Robots-Tag", "Link", "Last-Modified", "Etag", "Refresh",
	"Cache-Control", "Vary", "Location",
	// Date is the clock unavailable_after dates are judged by.
	"Date",
}

// Fetch GETs target, following redirects, and returns the final document.
// On error the returned Snapshot (never nil) holds the chain and whatever
// arrived; its Status is 0 when no final response was read.
func Fetch(ctx context.Context, cfg Config, target *url.URL) (*compare.Snapshot, error) {
	cfg = cfg.withDefaults()
	start := cfg.Now()
	snap := &compare.Snapshot{
		Lane:         compare.LanePlain,
		RequestedURL: target.String(),
		FinalURL:     target.String(),
		UserAgent:    cfg.UserAgent,
	}
	defer func() { snap.Timings.Total = cfg.Now().Sub(start) }()

	resp, err := follow(ctx, cfg, target, snap)
	if err != nil {
		return snap, err
	}
	defer resp.Body.Close()
	snap.Status = resp.StatusCode
	snap.FetchedAt = cfg.Now()
	snap.Header = keep(resp.Header)
	snap.ContentType = mediaType(resp.Header.Get("Content-Type"))
	if err := readBody(resp, cfg.MaxBody, snap); err != nil {
		return snap, fmt.Errorf("read body: %w", err)
	}
	return snap, nil
}

func (c Config) withDefaults() Config {
	if c.Transport == nil {
		c.Transport = http.DefaultTransport
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// follow makes one request per hop and returns the first non-redirect
// response, recording the chain in snap.
func follow(ctx context.Context, cfg Config, target *url.URL, snap *compare.Snapshot) (*http.Response, error) {
	seen := map[string]bool{target.String(): true}
	cur := target
	for hop := 0; ; hop++ {
		resp, err := get(ctx, cfg, cur, snap, hop == 0)
		if err != nil {
			return nil, err
		}
		if !isRedirect(resp.StatusCode) {
			return resp, nil
		}
		loc := resp.Header.Get("Location")
		drain(resp)
		snap.Redirects = append(snap.Redirects, compare.Redirect{URL: cur.String(), Status: resp.StatusCode, Location: loc})
		snap.Status = resp.StatusCode
		next, err := resolveLocation(cur, loc)
		if err != nil {
			return nil, err
		}
		if hop+1 > cfg.MaxRedirects {
			return nil, fmt.Errorf("%w: more than %d hops (next: %s)", ErrTooManyRedirects, cfg.MaxRedirects, next)
		}
		if seen[next.String()] {
			return nil, fmt.Errorf("%w: %s was already visited", ErrRedirectLoop, next)
		}
		if cfg.CheckHop != nil {
			if err := cfg.CheckHop(ctx, next); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrHopRefused, next, err)
			}
		}
		seen[next.String()] = true
		cur = next
		snap.FinalURL = cur.String()
	}
}

// get sends one GET; the first hop's time to first byte is recorded.
func get(ctx context.Context, cfg Config, u *url.URL, snap *compare.Snapshot, first bool) (*http.Response, error) {
	sent := cfg.Now()
	if first {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			GotFirstResponseByte: func() { snap.Timings.TTFB = cfg.Now().Sub(sent) },
		})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("User-Agent", cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	if first {
		cfg.Validators.header(req.Header)
	}
	resp, err := cfg.Transport.RoundTrip(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", u, err)
	}
	return resp, nil
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// resolveLocation turns a Location header into the next absolute URL,
// read and spelled as Chromium reads it (policy.ResolveLocation), so that
// the hop is sent, counted and decided as the render lane's would be. A
// backslash or control byte is refused outright.
func resolveLocation(base *url.URL, loc string) (*url.URL, error) {
	if loc == "" {
		return nil, fmt.Errorf("%w: redirect without Location", ErrBadLocation)
	}
	if strings.ContainsFunc(loc, func(r rune) bool { return r <= 0x20 || r == 0x7f || r == '\\' }) {
		return nil, fmt.Errorf("%w: %q contains a space, control byte or backslash", ErrBadLocation, loc)
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrBadLocation, loc, err)
	}
	if ref.Scheme != "" && ref.Scheme != "http" && ref.Scheme != "https" {
		return nil, fmt.Errorf("%w: %q is not http(s)", ErrBadLocation, loc)
	}
	spelled, err := policy.ResolveLocation(base.String(), loc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadLocation, err)
	}
	next, err := url.Parse(spelled)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrBadLocation, loc, err)
	}
	return next, nil
}

// drain reads a little of a redirect's body so the connection can be reused.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

func keep(h http.Header) compare.Header {
	out := compare.Header{}
	for _, k := range keptHeaders {
		if v := h.Values(k); len(v) > 0 {
			out[k] = append([]string(nil), v...)
		}
	}
	return out
}

// mediaType returns the lower-case media type of a Content-Type value.
func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}
