package audit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// hangServer answers robots.txt with 404 and requests from answerUA with a
// page, and holds every other request open without a byte of answer until
// the client hangs up. It counts the connections still open.
type hangServer struct {
	ln       net.Listener
	answerUA string
	open     atomic.Int64
	requests atomic.Int64
	wg       sync.WaitGroup
}

func startHangServer(tb testing.TB, answerUA string) *hangServer {
	tb.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &hangServer{ln: ln, answerUA: answerUA}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.open.Add(1)
			s.wg.Go(func() { s.serve(c) })
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

// addrPort is where the server listens.
func (s *hangServer) addrPort() netip.AddrPort {
	return netip.MustParseAddrPort(s.ln.Addr().String())
}

func (s *hangServer) serve(c net.Conn) {
	defer s.open.Add(-1)
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		s.requests.Add(1)
		switch {
		case req.URL.Path == "/robots.txt":
			io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
		case s.answerUA != "" && req.UserAgent() == s.answerUA:
			page := "<!DOCTYPE html><html><head><title>answered</title></head><body><h1>answered</h1></body></html>"
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: "+
				itoa(len(page))+"\r\n\r\n"+page)
		default:
			// Never answer; wait for the client to give up and close.
			io.Copy(io.Discard, br)
			return
		}
	}
}

// waitClosed waits until every connection to the server was closed.
func (s *hangServer) waitClosed(tb testing.TB) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s.open.Load() == 0 {
			return
		}
	}
	tb.Errorf("%d connections to the site still open after the audit", s.open.Load())
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}

// TestHostileDeadline: the hard deadline is one context over the whole
// audit. With a short timeout, a server that never answers gives a timeout
// report, one that never answers the browser gives a partial report that
// keeps the plain lane, and a page that never settles is cut at the
// deadline. Afterwards no goroutine, browser target or connection to the
// site is left.
func TestHostileDeadline(t *testing.T) {
	never := startHangServer(t, "")
	notBrowser := startHangServer(t, policy.DefaultIdentity().PlainUA())
	h := mustHostile(t, hostileOptions{
		guard: func(e *env, gc *policy.GuardConfig) {
			for name, s := range map[string]*hangServer{"never.example": never, "not-browser.example": notBrowser} {
				gc.Resolve = append(gc.Resolve, policy.ResolveRule{Host: name, Port: 80, Addr: s.addrPort()})
				gc.AllowAddrs = append(gc.AllowAddrs, s.addrPort())
			}
		},
		config: func(c *Config) { c.Timeout = 5 * time.Second },
	})
	h.site.Handle("/hostile/tick", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "tick")
	}))
	tests := []struct {
		name, url string
		server    *hangServer
		status    Status
		plain     Outcome
		render    Outcome
	}{
		{"server never answers", "http://never.example/", never, StatusTimeout, OutcomeTimeout, OutcomeTimeout},
		{"server never answers the browser", "http://not-browser.example/", notBrowser, StatusPartial, OutcomeOK, OutcomeTimeout},
		{"page never settles", "http://shop.example/hostile/never-settles.html", nil, StatusComplete, OutcomeOK, OutcomeOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idle := waitIdle(t)
			r := h.auditURL(t, tc.url)
			t.Logf("%s", describe(r))
			if r.Status != tc.status || r.Lanes.Plain.Outcome != tc.plain || r.Lanes.Render.Outcome != tc.render {
				t.Fatalf("want status %s, plain %s, render %s: %s", tc.status, tc.plain, tc.render, describe(r))
			}
			for _, l := range []struct {
				lane compare.Lane
				lr   LaneReport
			}{{compare.LanePlain, r.Lanes.Plain}, {compare.LaneRender, r.Lanes.Render.LaneReport}} {
				if l.lr.Outcome == OutcomeTimeout {
					if _, ok := laneFinding(r, compare.CodeLaneTimeout, l.lane); !ok {
						t.Errorf("no %s finding for the %s lane", compare.CodeLaneTimeout, l.lane)
					}
				}
			}
			if tc.plain == OutcomeOK && (r.Lanes.Plain.Page == nil || r.Lanes.Plain.Page.Title == "") {
				t.Errorf("the finished plain lane was not kept: %+v", r.Lanes.Plain)
			}
			if tc.name == "page never settles" {
				// A page that keeps fetching ends at its budget of page
				// time, or at the wall-clock cap when its fetches are slow
				// (each tick waits for a real round trip), and the report
				// says which. page_time_ms is the page's last activity: a
				// tick 50 ms of page time after the last fetch, so within
				// 50 ms of the budget's end.
				rl := r.Lanes.Render
				switch {
				case rl.SettledBy == "budget" && rl.PageTimeMS >= 5000-50 && hasFinding(r, compare.CodeRenderBudget):
				case rl.SettledBy == "deadline" && !rl.Settled && hasFinding(r, compare.CodeRenderNotSettled):
				default:
					t.Errorf("want the render ended by its budget (%s) or the cap (%s): settled_by %q, page time %d ms",
						compare.CodeRenderBudget, compare.CodeRenderNotSettled, rl.SettledBy, rl.PageTimeMS)
				}
				if !strings.Contains(r.Lanes.Render.FinalURL, "never-settles") {
					t.Errorf("render lane final URL %s", r.Lanes.Render.FinalURL)
				}
			}
			if tc.server != nil {
				if tc.server.requests.Load() == 0 {
					t.Fatalf("the site was never asked")
				}
				tc.server.waitClosed(t)
			}
			checkBackToIdle(t, idle)
			h.canary.CheckZero(t)
		})
	}
}
