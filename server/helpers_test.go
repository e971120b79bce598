package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/render"
	"lekta.dev/lekta/schedule"
)

// stubRenderer stands in for Chromium in the handler tests: it returns a
// fixed rendered document, after its gate opens when one is set.
type stubRenderer struct {
	gate    chan struct{}
	started chan string
	renders atomic.Int32
}

const stubRendered = `<!doctype html><html lang="en"><head><title>Rendered title</title></head>
<body><h1>Blue stoneware kettle</h1><p>The page title of this page is set only by a script.</p>
<a href="/cart.html">Cart</a></body></html>`

func (s *stubRenderer) Render(ctx context.Context, req render.Request) (*compare.Snapshot, error) {
	s.renders.Add(1)
	if s.started != nil {
		s.started <- req.URL
	}
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &compare.Snapshot{Lane: compare.LaneRender, RequestedURL: req.URL, FinalURL: req.URL,
		Status: 200, ContentType: "text/html", Body: []byte(stubRendered), Bytes: int64(len(stubRendered)),
		Header: compare.Header{}, UserAgent: s.UserAgent(),
		Timings: compare.Timings{TTFB: time.Millisecond, Total: 2 * time.Millisecond},
		Render: &compare.RenderDetails{Blocked: map[string]int{"image": 2}, Requests: 3, Settled: true,
			Timing: compare.RenderTiming{Navigate: 40 * time.Millisecond, DocumentRequest: 20 * time.Millisecond,
				Load: 45 * time.Millisecond, Settle: 30 * time.Millisecond, Snapshot: 10 * time.Millisecond}}}, nil
}

func (s *stubRenderer) UserAgent() string {
	return "StubChrome/1.0 LektaBot/0.1 (+https://lekta.dev/bot)"
}

// flakyStore is a real memory store that can be switched to answer
// cache.ErrUnavailable, as a Redis store does when Redis is down.
type flakyStore struct {
	cache.Store
	down atomic.Bool
	// reports counts the reads of reports (Report calls).
	reports atomic.Int64
}

func (f *flakyStore) err() error {
	if f.down.Load() {
		return fmt.Errorf("redis: dial: %w", cache.ErrUnavailable)
	}
	return nil
}

func (f *flakyStore) Lookup(ctx context.Context, u string) (cache.Entry, bool, error) {
	if err := f.err(); err != nil {
		return cache.Entry{}, false, err
	}
	return f.Store.Lookup(ctx, u)
}

func (f *flakyStore) Admit(ctx context.Context, u, id string) (cache.Admission, error) {
	if err := f.err(); err != nil {
		return cache.Admission{}, err
	}
	return f.Store.Admit(ctx, u, id)
}

func (f *flakyStore) Reserve(ctx context.Context, u, id string, within time.Duration) (cache.Admission, error) {
	if err := f.err(); err != nil {
		return cache.Admission{}, err
	}
	return f.Store.Reserve(ctx, u, id, within)
}

func (f *flakyStore) Report(ctx context.Context, id string) (cache.Entry, error) {
	f.reports.Add(1)
	if err := f.err(); err != nil {
		return cache.Entry{}, err
	}
	return f.Store.Report(ctx, id)
}

func (f *flakyStore) Ping(ctx context.Context) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Store.Ping(ctx)
}

// harness is a Server over a real Auditor (real plain lane, real memory
// store, real test site) with the stub renderer, served by httptest.
type harness struct {
	tb     testing.TB
	srv    *Server
	ts     *httptest.Server
	site   *testsite.Site
	rend   *stubRenderer
	store  *flakyStore
	sched  *schedule.Scheduler
	client *http.Client

	mu       sync.Mutex
	exchange []exchange
}

// exchange is one request and its answer, for the OpenAPI check.
type exchange struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
}

// harnessConfig is what a harness is built from: the server's Config and
// its queue's (River on a SQLite file in riverDir, or PostgreSQL at
// databaseURL; instances given the same one share the queue).
type harnessConfig struct {
	Config
	rend *stubRenderer
	// renderers and queueLimit are the queue's workers and bound.
	renderers, queueLimit int
	riverDir, databaseURL string
	// records and minInterval turn on members' re-audits.
	records     *records.DB
	minInterval time.Duration
	timeout     time.Duration
	// started, when set, receives the instance's scheduler once running.
	started func(*schedule.Scheduler)
}

type harnessOpt func(*harnessConfig)

// newHarness starts a server for tb; hosts shop.example, other.example and
// a.example … e.example resolve to the test site.
func newHarness(tb testing.TB, opts ...harnessOpt) *harness {
	tb.Helper()
	mem, err := cache.NewMemoryStore(cache.Defaults(), time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	return newInstance(tb, testsite.Start(tb), mem, cache.Defaults(), opts...)
}

// newInstance is one server (an instance) over store, whose limits are
// lim, auditing site; several may share a site, a store and a queue
// (sharedQueue).
func newInstance(tb testing.TB, site *testsite.Site, shared cache.Store, lim cache.Limits, opts ...harnessOpt) *harness {
	tb.Helper()
	hosts := append([]string{"shop.example", "other.example", "hooks.example"}, "a.example", "b.example", "c.example", "d.example", "e.example")
	guard, err := policy.NewGuard(site.GuardConfig(hosts...))
	if err != nil {
		tb.Fatal(err)
	}
	store := &flakyStore{Store: shared}
	rend := &stubRenderer{}
	id := policy.DefaultIdentity()
	// A submitter waits at most 10 s for a start here, so that a second
	// audit of a host within its minute is refused at once, as the tests
	// of refusals expect; tests of the queue's waits set their own.
	hc := &harnessConfig{rend: rend, renderers: 2, queueLimit: 4, timeout: 20 * time.Second, Config: Config{
		MaxStartWait: 10 * time.Second,
		ClientRate:   []cache.Window{{N: 1000, Per: time.Minute}},
		Policy: Policy{Identity: id, RenderUA: rend.UserAgent, Limits: lim, Timeout: 20 * time.Second,
			MaxRedirects: 5, MaxNavigations: 3, MaxFrameLoads: 20, ClientRate: []cache.Window{{N: 1000, Per: time.Minute}}},
		Ready: []Check{{Name: "store", Func: store.Ping}},
	}}
	aud, err := audit.New(audit.Config{Guard: guard, Renderer: rend, Store: store, Token: id.Token,
		PlainUA: id.PlainUA(), Timeout: hc.timeout, LeaseTTL: lim.LeaseTTL})
	if err != nil {
		tb.Fatal(err)
	}
	hc.Auditor = aud
	for _, o := range opts {
		o(hc)
	}
	if hc.riverDir == "" && hc.databaseURL == "" {
		hc.riverDir = tb.TempDir()
	}
	w, _ := schedule.ParseWindow("01:00-05:00", time.UTC)
	sched, err := schedule.New(context.Background(), schedule.Config{Records: hc.records, DataDir: hc.riverDir,
		DatabaseURL: hc.databaseURL, Guard: guard, Renderers: hc.renderers, QueueLimit: hc.queueLimit,
		Timeout: hc.timeout, Window: w, MinInterval: cmp.Or(hc.minInterval, time.Hour), Tick: time.Second,
		CacheTTL: lim.CacheTTL})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := hc.Config
	cfg.Queue = sched
	if hc.records != nil {
		cfg.Members, cfg.Guard = hc.records, guard
	}
	srv, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := sched.Start(context.Background(), srv); err != nil {
		tb.Fatal(err)
	}
	if hc.started != nil {
		hc.started(sched)
	}
	ts := httptest.NewServer(srv.Handler())
	h := &harness{tb: tb, srv: srv, ts: ts, site: site, rend: rend, store: store, sched: sched,
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	// Every API answer any test sees is checked against openapi.json.
	tb.Cleanup(func() { h.checkSpec(tb) })
	tb.Cleanup(func() {
		if rend.gate != nil {
			select {
			case <-rend.gate:
			default:
				close(rend.gate)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			tb.Errorf("shutdown: %v", err)
		}
		ts.Close()
	})
	return h
}

// sharedQueue makes instances share one queue: River's SQLite file in dir.
func sharedQueue(dir string) harnessOpt {
	return func(c *harnessConfig) { c.riverDir = dir }
}

// gated makes every render wait until the test opens the gate.
func gated(c *harnessConfig) {
	c.rend.gate = make(chan struct{})
	c.rend.started = make(chan string, 64)
}

// open lets gated renders finish.
func (h *harness) open() { close(h.rend.gate) }

// do sends a request and records the exchange.
func (h *harness) do(method, path string, body string, hdr map[string]string) (*http.Response, []byte) {
	h.tb.Helper()
	req, err := http.NewRequest(method, h.ts.URL+path, strings.NewReader(body))
	if err != nil {
		h.tb.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.tb.Fatal(err)
	}
	h.mu.Lock()
	h.exchange = append(h.exchange, exchange{method: method, path: path, status: resp.StatusCode, header: resp.Header, body: b})
	h.mu.Unlock()
	return resp, b
}

// post submits url through the API.
func (h *harness) post(u string) (*http.Response, []byte) {
	h.tb.Helper()
	b, _ := json.Marshal(map[string]string{"url": u})
	return h.do("POST", "/api/v1/audits", string(b), map[string]string{"Content-Type": "application/json"})
}

// postForm submits url through the form.
func (h *harness) postForm(u string, hdr map[string]string) (*http.Response, []byte) {
	h.tb.Helper()
	all := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range hdr {
		all[k] = v
	}
	return h.do("POST", "/audits", url.Values{"url": {u}}.Encode(), all)
}

// decode unmarshals b into v or fails.
func decode[T any](tb testing.TB, b []byte) T {
	tb.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// apiErr is the error JSON.
type apiErr struct {
	Error struct {
		Code        string `json:"code"`
		Message     string `json:"message"`
		RetryAfterS int64  `json:"retry_after_s"`
	} `json:"error"`
}

// waitReport long-polls id until the report is there.
func (h *harness) waitReport(id string) *audit.Report {
	h.tb.Helper()
	return h.waitReportWithin(id, 30*time.Second)
}

// waitReportWithin is waitReport with a deadline of its own.
func (h *harness) waitReportWithin(id string, within time.Duration) *audit.Report {
	h.tb.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, b := h.do("GET", "/api/v1/audits/"+id+"?wait=5s", "", nil)
		switch resp.StatusCode {
		case http.StatusOK:
			return decode[*audit.Report](h.tb, b)
		case http.StatusAccepted:
			continue
		default:
			h.tb.Fatalf("GET audit %s: %d %s", id, resp.StatusCode, b)
		}
	}
	h.tb.Fatalf("audit %s did not finish", id)
	return nil
}
