package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const testUA = "Mozilla/5.0 (compatible; LektaBot/0.1; +https://lekta.dev/bot)"

// robotsSite is an httptest server that records every request's path.
type robotsSite struct {
	*httptest.Server
	mu       sync.Mutex
	paths    []string
	agents   []string
	released chan struct{}
}

// startRobotsSite serves handler and records requests; handlers that block
// wait on s.released, closed at cleanup.
func startRobotsSite(tb testing.TB, handler func(s *robotsSite, w http.ResponseWriter, r *http.Request)) *robotsSite {
	tb.Helper()
	s := &robotsSite{released: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.agents = append(s.agents, r.UserAgent()+"|"+r.Header.Get("Cookie"))
		s.mu.Unlock()
		handler(s, w, r)
	}))
	tb.Cleanup(func() {
		close(s.released)
		s.Close()
	})
	return s
}

// requested returns the paths requested so far.
func (s *robotsSite) requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

func (s *robotsSite) origin(tb testing.TB) *url.URL {
	tb.Helper()
	u, err := url.Parse(s.URL + "/some/page?x=1")
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// plainFetchConfig uses a plain transport, as the tests may not use the guard.
func plainFetchConfig(tb testing.TB) RobotsFetchConfig {
	tb.Helper()
	tr := &http.Transport{Proxy: nil}
	tb.Cleanup(tr.CloseIdleConnections)
	return RobotsFetchConfig{Transport: tr, Timeout: 5 * time.Second}
}

func TestFetchRobotsStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  int
		outcome RobotsOutcome
		reason  string
	}{
		{200, RobotsFetched, ""},
		{204, RobotsFetched, ""},
		{401, RobotsNotFound, "HTTP 401 Unauthorized, which means no restrictions"},
		{403, RobotsNotFound, "HTTP 403 Forbidden, which means no restrictions"},
		{404, RobotsNotFound, "HTTP 404 Not Found, which means no restrictions"},
		{410, RobotsNotFound, "HTTP 410 Gone, which means no restrictions"},
		{429, RobotsUnreachable, "robots.txt answered HTTP 429 Too Many Requests"},
		{500, RobotsUnreachable, "robots.txt answered HTTP 500 Internal Server Error"},
		{503, RobotsUnreachable, "robots.txt answered HTTP 503 Service Unavailable"},
		{304, RobotsUnreachable, "robots.txt answered HTTP 304 Not Modified"},
	}
	const body = "User-agent: *\nDisallow: /private\n"
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			t.Parallel()
			site := startRobotsSite(t, func(_ *robotsSite, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(tc.status)
				fmt.Fprint(w, body)
			})
			res := FetchRobots(context.Background(), plainFetchConfig(t), site.origin(t), testUA)
			if res.Outcome != tc.outcome || res.HTTPStatus != tc.status {
				t.Fatalf("outcome %q, status %d; want %q, %d (reason %q)", res.Outcome, res.HTTPStatus, tc.outcome, tc.status, res.Reason)
			}
			if !strings.Contains(res.Reason, tc.reason) || (tc.reason == "") != (res.Reason == "") {
				t.Errorf("reason %q, want it to contain %q", res.Reason, tc.reason)
			}
			if got := site.requested(); !slices.Equal(got, []string{"/robots.txt"}) {
				t.Errorf("requests %q, want exactly one for /robots.txt (no retries)", got)
			}
			if res.URL != site.URL+"/robots.txt" {
				t.Errorf("URL %q, want %q", res.URL, site.URL+"/robots.txt")
			}
			d, err := res.Decide("LektaBot", "/private")
			switch tc.outcome {
			case RobotsFetched:
				wantAllowed := tc.status == 204 // no content, no rules
				if err != nil || d.Allowed != wantAllowed {
					t.Errorf("Decide = %+v, %v; want allowed %v", d, err, wantAllowed)
				}
			case RobotsNotFound:
				if err != nil || !d.Allowed || d.Basis != BasisNotFound || res.Robots != nil {
					t.Errorf("Decide = %+v, %v; want allowed, basis not_found", d, err)
				}
			case RobotsUnreachable:
				if !errors.Is(err, ErrRobotsUnreachable) || !errors.Is(res.Err, ErrRobotsUnreachable) || d.Allowed {
					t.Errorf("Decide = %+v, %v; want not allowed and ErrRobotsUnreachable", d, err)
				}
			}
		})
	}
}

func TestFetchRobotsHeaders(t *testing.T) {
	t.Parallel()
	site := startRobotsSite(t, func(_ *robotsSite, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "x"})
			http.Redirect(w, r, "/real-robots.txt", http.StatusFound)
			return
		}
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	})
	res := FetchRobots(context.Background(), plainFetchConfig(t), site.origin(t), testUA)
	if res.Outcome != RobotsFetched {
		t.Fatalf("outcome %q (%s)", res.Outcome, res.Reason)
	}
	for _, a := range site.agents {
		if a != testUA+"|" {
			t.Errorf("request had User-Agent|Cookie %q, want %q and no cookie", a, testUA+"|")
		}
	}
}

// redirectChain serves /robots.txt → /r1 → … → /rN → robots body.
func redirectChain(n int) func(*robotsSite, http.ResponseWriter, *http.Request) {
	return func(_ *robotsSite, w http.ResponseWriter, r *http.Request) {
		step := 0
		if r.URL.Path != "/robots.txt" {
			fmt.Sscanf(r.URL.Path, "/r%d", &step)
		}
		if step < n {
			http.Redirect(w, r, fmt.Sprintf("/r%d", step+1), http.StatusMovedPermanently)
			return
		}
		fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
	}
}

func TestFetchRobotsRedirects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		hops    int
		outcome RobotsOutcome
		reason  string
	}{
		{"one_redirect_same_host", 1, RobotsFetched, ""},
		{"five_redirects", 5, RobotsFetched, ""},
		{"six_redirects", 6, RobotsUnreachable, "robots.txt redirected more than 5 times"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site := startRobotsSite(t, redirectChain(tc.hops))
			res := FetchRobots(context.Background(), plainFetchConfig(t), site.origin(t), testUA)
			if res.Outcome != tc.outcome || res.Reason != tc.reason {
				t.Fatalf("outcome %q, reason %q; want %q, %q", res.Outcome, res.Reason, tc.outcome, tc.reason)
			}
			want := []string{"/robots.txt"}
			for i := 1; i <= min(tc.hops, RobotsMaxRedirects); i++ {
				want = append(want, fmt.Sprintf("/r%d", i))
			}
			if got := site.requested(); !slices.Equal(got, want) {
				t.Errorf("requests %q, want %q", got, want)
			}
			if len(res.Hops) != len(want) || res.URL != site.URL+"/robots.txt" {
				t.Errorf("hops %q, URL %q", res.Hops, res.URL)
			}
			if tc.outcome == RobotsFetched && res.Robots.Decide("LektaBot", "/private").Allowed {
				t.Error("/private allowed, want the redirected file's Disallow to apply")
			}
		})
	}
}

func TestFetchRobotsRedirectOtherHost(t *testing.T) {
	t.Parallel()
	other := startRobotsSite(t, func(_ *robotsSite, w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "User-agent: LektaBot\nDisallow: /shop/\n")
	})
	site := startRobotsSite(t, func(_ *robotsSite, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/robots.txt", http.StatusPermanentRedirect)
	})
	res := FetchRobots(context.Background(), plainFetchConfig(t), site.origin(t), testUA)
	if res.Outcome != RobotsFetched {
		t.Fatalf("outcome %q (%s)", res.Outcome, res.Reason)
	}
	if want := []string{site.URL + "/robots.txt", other.URL + "/robots.txt"}; !slices.Equal(res.Hops, want) {
		t.Errorf("hops %q, want %q", res.Hops, want)
	}
	if res.URL != site.URL+"/robots.txt" {
		t.Errorf("URL %q: the rules must stay bound to the origin asked for", res.URL)
	}
	if d, _ := res.Decide("LektaBot", "/shop/cart"); d.Allowed {
		t.Errorf("/shop/cart allowed; the other host's rules apply to the original origin")
	}
	if got := other.requested(); len(got) != 1 {
		t.Errorf("other host requests %q, want one", got)
	}
}

func TestFetchRobotsRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		location string // where /robots.txt redirects; "" serves it
		refuse   string // path CheckURL refuses
		reason   string
		paths    []string // requested
	}{
		{"loop", "/a", "", "robots.txt redirects loop back to ", []string{"/robots.txt", "/a"}},
		{"refused_hop", "/internal", "/internal", "robots.txt URL http://", []string{"/robots.txt"}},
		{"refused_first_url", "", "/robots.txt", "refused: test refuses", nil},
		{"redirect_without_location", "-", "", "answered HTTP 302 Found without a usable http(s) Location", []string{"/robots.txt"}},
		{"redirect_to_ftp", "ftp://e.example/robots.txt", "", "without a usable http(s) Location", []string{"/robots.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site := startRobotsSite(t, func(_ *robotsSite, w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/a":
					http.Redirect(w, r, "/robots.txt", http.StatusFound)
				case tc.location == "-":
					w.WriteHeader(http.StatusFound)
				case tc.location != "":
					w.Header().Set("Location", tc.location)
					w.WriteHeader(http.StatusFound)
				default:
					fmt.Fprint(w, "User-agent: *\nAllow: /\n")
				}
			})
			cfg := plainFetchConfig(t)
			cfg.CheckURL = func(u *url.URL) error {
				if u.Path == tc.refuse {
					return fmt.Errorf("%w: test refuses %s", ErrTargetRefused, u.Path)
				}
				return nil
			}
			res := FetchRobots(context.Background(), cfg, site.origin(t), testUA)
			if res.Outcome != RobotsUnreachable || !strings.Contains(res.Reason, tc.reason) {
				t.Fatalf("outcome %q, reason %q; want unreachable, %q", res.Outcome, res.Reason, tc.reason)
			}
			if !errors.Is(res.Err, ErrRobotsUnreachable) {
				t.Errorf("Err %v does not wrap ErrRobotsUnreachable", res.Err)
			}
			if got := site.requested(); !slices.Equal(got, tc.paths) {
				t.Errorf("requests %q, want %q", got, tc.paths)
			}
		})
	}
}

func TestFetchRobotsNetworkFailures(t *testing.T) {
	t.Parallel()
	stall := func(s *robotsSite, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-s.released:
		}
	}
	stallBody := func(s *robotsSite, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		fmt.Fprint(w, "User-agent: *\n")
		w.(http.Flusher).Flush()
		stall(s, w, r)
	}
	tests := []struct {
		name    string
		handler func(*robotsSite, http.ResponseWriter, *http.Request)
		timeout time.Duration // cfg.Timeout
		ctxWait time.Duration // caller's deadline, 0 for none
		cancel  bool          // caller cancels up front
		reason  string
	}{
		{"own_timeout", stall, 100 * time.Millisecond, 0, false, "robots.txt did not arrive in time (LektaBot waits at most 100ms)"},
		{"caller_deadline", stall, 0, 100 * time.Millisecond, false, "robots.txt did not arrive in time"},
		{"body_stalls", stallBody, 100 * time.Millisecond, 0, false, "the robots.txt body did not arrive in time"},
		{"canceled", stall, 0, 0, true, "reading robots.txt was canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site := startRobotsSite(t, tc.handler)
			cfg := plainFetchConfig(t)
			cfg.Timeout = tc.timeout
			ctx := context.Background()
			if tc.ctxWait > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxWait)
				t.Cleanup(cancel)
			}
			if tc.cancel {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				cancel()
			}
			res := FetchRobots(ctx, cfg, site.origin(t), testUA)
			if res.Outcome != RobotsUnreachable || !strings.Contains(res.Reason, tc.reason) {
				t.Fatalf("outcome %q, reason %q; want unreachable, %q", res.Outcome, res.Reason, tc.reason)
			}
			if !errors.Is(res.Err, ErrRobotsUnreachable) {
				t.Errorf("Err %v does not wrap ErrRobotsUnreachable", res.Err)
			}
		})
	}

	t.Run("connection_refused", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		res := FetchRobots(context.Background(), plainFetchConfig(t), &url.URL{Scheme: "http", Host: addr}, testUA)
		want := "robots.txt could not be fetched: connection refused"
		if res.Outcome != RobotsUnreachable || res.Reason != want || res.HTTPStatus != 0 {
			t.Fatalf("outcome %q, reason %q, status %d; want unreachable, %q, 0", res.Outcome, res.Reason, res.HTTPStatus, want)
		}
	})

	// What the guard's dialer and the resolver report reaches the reason
	// without the address in it.
	dialErrors := []struct {
		name   string
		err    error
		reason string
	}{
		{"blocked_address", fmt.Errorf("%w: 10.0.0.1 is private", ErrBlockedAddress),
			"robots.txt is on an address LektaBot may not connect to"},
		{"no_such_host", &net.DNSError{Err: "no such host", Name: "nowhere.example", IsNotFound: true},
			"robots.txt could not be fetched: the host name does not resolve"},
		{"other", errors.New("something odd"), "robots.txt could not be fetched: network error"},
	}
	for _, tc := range dialErrors {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return nil, tc.err }}
			t.Cleanup(tr.CloseIdleConnections)
			res := FetchRobots(context.Background(), RobotsFetchConfig{Transport: tr},
				&url.URL{Scheme: "http", Host: "nowhere.example"}, testUA)
			if res.Outcome != RobotsUnreachable || res.Reason != tc.reason {
				t.Fatalf("outcome %q, reason %q; want unreachable, %q", res.Outcome, res.Reason, tc.reason)
			}
			if !errors.Is(res.Err, tc.err) {
				t.Errorf("Err %v does not wrap the dial error", res.Err)
			}
		})
	}
}

func TestFetchRobotsHugeBody(t *testing.T) {
	t.Parallel()
	body := "User-agent: *\nDisallow: /early\n" + strings.Repeat("# padding padding padding\n", 80_000) + "Disallow: /late\n"
	site := startRobotsSite(t, func(_ *robotsSite, w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, body)
	})
	res := FetchRobots(context.Background(), plainFetchConfig(t), site.origin(t), testUA)
	if res.Outcome != RobotsFetched || res.Size != RobotsMaxBytes+1 || !res.Robots.Truncated() {
		t.Fatalf("outcome %q, size %d, truncated %v; want fetched, %d, true", res.Outcome, res.Size, res.Robots != nil && res.Robots.Truncated(), RobotsMaxBytes+1)
	}
	if res.Robots.Decide("LektaBot", "/early").Allowed || !res.Robots.Decide("LektaBot", "/late").Allowed {
		t.Error("want /early disallowed (before the limit) and /late allowed (past it)")
	}
	if findIssue(res.Robots.Issues(), IssueTooLarge) == nil {
		t.Error("no too_large issue")
	}
}

func TestFetchRobotsBadConfig(t *testing.T) {
	t.Parallel()
	res := FetchRobots(context.Background(), RobotsFetchConfig{}, &url.URL{Scheme: "https", Host: "e.example"}, testUA)
	if res.Outcome != RobotsUnreachable || res.Reason != "no transport configured" || len(res.Hops) != 0 {
		t.Errorf("nil transport: outcome %q, reason %q, hops %q", res.Outcome, res.Reason, res.Hops)
	}
	res = FetchRobots(context.Background(), plainFetchConfig(t), &url.URL{Scheme: "ftp", Host: "e.example"}, testUA)
	if res.Outcome != RobotsUnreachable || !errors.Is(res.Err, ErrInvalidURL) {
		t.Errorf("ftp origin: outcome %q, err %v; want unreachable wrapping ErrInvalidURL", res.Outcome, res.Err)
	}
}

func TestRobotsURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://Shop.example/a/b?c#d", "https://Shop.example/robots.txt"},
		{"HTTP://e.example:8080", "http://e.example:8080/robots.txt"},
		{"http://[::1]:81/x", "http://[::1]:81/robots.txt"},
		{"mailto:x@e.example", ""},
		{"/relative", ""},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := RobotsURL(u)
		if tc.want == "" {
			if !errors.Is(err, ErrInvalidURL) {
				t.Errorf("RobotsURL(%s) = %v, %v; want ErrInvalidURL", tc.in, got, err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("RobotsURL(%s) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestRobotsResultDecideWithoutRules(t *testing.T) {
	t.Parallel()
	d, err := RobotsResult{Outcome: RobotsFetched}.Decide("LektaBot", "/")
	if d.Allowed || !errors.Is(err, ErrRobotsUnreachable) {
		t.Errorf("fetched result without rules: %+v, %v; want not allowed and ErrRobotsUnreachable", d, err)
	}
}
