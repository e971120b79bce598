package verify

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestParseLine(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 3, 41, 0, time.FixedZone("", 3600))
	cases := []struct {
		name, line, host string
		want             Claim
	}{
		{"common", `203.0.113.7 - - [01/Dec/2026:12:03:41 +0100] "GET /a/b?x=1&y HTTP/1.1" 200 512`, "Shop.Example.",
			Claim{Time: at, Client: netip.MustParseAddr("203.0.113.7"), Host: "shop.example", Method: "GET", Path: "/a/b", Query: "x=1&y"}},
		{"combined", `203.0.113.7 - frank [01/Dec/2026:12:03:41 +0100] "HEAD / HTTP/2.0" 304 - "https://ref.example/" "Mozilla/5.0 (compatible; LektaBot/1.0; +https://lekta.dev/bot)"`, "shop.example",
			Claim{Time: at, Client: netip.MustParseAddr("203.0.113.7"), Host: "shop.example", Method: "HEAD", Path: "/",
				UserAgent: "Mozilla/5.0 (compatible; LektaBot/1.0; +https://lekta.dev/bot)"}},
		{"vhost combined", `shop.example:8080 2001:db8::7 - - [01/Dec/2026:12:03:41 +0100] "GET /p HTTP/1.1" 404 12 "-" "-"`, "",
			Claim{Time: at, Client: netip.MustParseAddr("2001:db8::7"), Host: "shop.example", Port: 8080, Method: "GET", Path: "/p"}},
		{"host overrides vhost", `other.example 203.0.113.7 - - [01/Dec/2026:12:03:41 +0100] "GET /p HTTP/1.1" 200 1`, "shop.example",
			Claim{Time: at, Client: netip.MustParseAddr("203.0.113.7"), Host: "shop.example", Method: "GET", Path: "/p"}},
		{"absolute target, escaped quote", `::ffff:203.0.113.7 - - [01/Dec/2026:12:03:41 +0100] "GET http://shop.example/q?\"a\" HTTP/1.1" 200 1`, "shop.example",
			Claim{Time: at, Client: netip.MustParseAddr("203.0.113.7"), Host: "shop.example", Method: "GET", Path: "/q", Query: `"a"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ParseLine(tc.line, tc.host)
			if err != nil {
				t.Fatalf("ParseLine: %v", err)
			}
			tc.want.Precision = time.Second
			if !c.Time.Equal(tc.want.Time) {
				t.Errorf("Time = %v, want %v", c.Time, tc.want.Time)
			}
			c.Time = tc.want.Time
			if c != tc.want {
				t.Errorf("ParseLine =\n%+v\nwant\n%+v", c, tc.want)
			}
		})
	}
}

func TestParseLineErrors(t *testing.T) {
	cases := []struct {
		name, line, host, field, says string
	}{
		{"empty", "  ", "h.example", "line", "is missing"},
		{"no time", `203.0.113.7 - - "GET / HTTP/1.1" 200 1`, "h.example", "time", "in brackets"},
		{"bad time", `203.0.113.7 - - [2026-12-01 12:03:41] "GET / HTTP/1.1" 200 1`, "h.example", "time", `"2026-12-01 12:03:41"`},
		{"no offset", `203.0.113.7 - - [01/Dec/2026:12:03:41] "GET / HTTP/1.1" 200 1`, "h.example", "time", "offset"},
		{"host name client", `crawler.example - - [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1" 200 1`, "h.example", "client address", "IP address"},
		{"too few fields", `- [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1" 200 1`, "h.example", "line", "ident"},
		{"no request", `203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] 200 1`, "h.example", "request", "in quotes"},
		{"garbled request", `203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "-" 400 0`, "h.example", "request", "method, target"},
		{"lower-case method", `203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "get / HTTP/1.1" 200 1`, "h.example", "method", "capitals"},
		{"relative path", `203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "GET page HTTP/1.1" 200 1`, "h.example", "path", "starting with /"},
		{"bad status", `203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1" OK 1`, "h.example", "status", "three-digit"},
		{"unclosed quote", `203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1 200 1`, "h.example", "line", "closing quote"},
		{"no host", `203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1" 200 1`, "", "host", "no virtual host"},
		{"bad host", `203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1" 200 1`, "h\x1b[31m.example", "host", `\x1b`},
		{"bad port", `h.example:99999 203.0.113.7 - - [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1" 200 1`, "", "host", "port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseLine(tc.line, tc.host)
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrUnreadable) {
				t.Fatalf("ParseLine error = %v, want a *FieldError wrapping ErrUnreadable", err)
			}
			if fe.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error = %q (field %q), want field %q and %q", err, fe.Field, tc.field, tc.says)
			}
			if strings.ContainsAny(err.Error(), "\x1b\n\r") {
				t.Errorf("error %q carries a control character", err)
			}
		})
	}
}

func TestParseFields(t *testing.T) {
	c, err := ParseFields(Fields{Time: "2026-12-01T12:03:41.208+01:00", Client: "203.0.113.7", Host: "shop.example",
		Method: "GET", Path: "/a?b=c", UserAgent: "x LektaBot/1"})
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 12, 1, 11, 3, 41, 208e6, time.UTC)
	if !c.Time.Equal(want) || c.Precision != 0 || c.Path != "/a" || c.Query != "b=c" || c.Method != "GET" || c.UserAgent != "x LektaBot/1" {
		t.Errorf("ParseFields = %+v", c)
	}
	c, err = ParseFields(Fields{Time: "[01/Dec/2026:12:03:41 +0000]", Client: "203.0.113.7", Host: "shop.example", Method: "GET", Path: "/"})
	if err != nil || c.Precision != time.Second {
		t.Errorf("ParseFields with a log time = %+v, %v; want precision 1s", c, err)
	}
	for _, tc := range []struct {
		f     Fields
		field string
	}{
		{Fields{Client: "203.0.113.7", Host: "h", Method: "GET", Path: "/"}, "time"},
		{Fields{Time: "2026-12-01T12:03:41", Client: "203.0.113.7", Host: "h", Method: "GET", Path: "/"}, "time"},
		{Fields{Time: "2026-12-01T12:03:41Z", Host: "h", Method: "GET", Path: "/"}, "client address"},
		{Fields{Time: "2026-12-01T12:03:41Z", Client: "203.0.113.7", Method: "GET", Path: "/"}, "host"},
		{Fields{Time: "2026-12-01T12:03:41Z", Client: "203.0.113.7", Host: "h", Path: "/"}, "method"},
		{Fields{Time: "2026-12-01T12:03:41Z", Client: "203.0.113.7", Host: "h", Method: "GET"}, "path"},
	} {
		_, err := ParseFields(tc.f)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("ParseFields(%+v) = %v, want an error naming the %s", tc.f, err, tc.field)
		}
	}
}

// storeOf is a Store over a slice, for the matcher's unit tests.
type storeOf []Record

func (s storeOf) Candidates(_ context.Context, host string, from, to time.Time) ([]Record, error) {
	var out []Record
	for _, r := range s {
		if r.Host == host && !r.At.Before(from) && !r.At.After(to) {
			out = append(out, r)
		}
	}
	return out, nil
}

var _ Store = storeOf(nil)

func TestVerify(t *testing.T) {
	sent := time.Date(2026, 12, 1, 12, 3, 41, 208e6, time.UTC)
	ours := netip.MustParseAddr("198.51.100.4")
	recs := storeOf{
		{At: sent, Lane: LaneRender, Method: "GET", Host: "shop.example", Port: 443, Path: "/p", QueryHash: QueryHash("q=1"), Source: ours},
		{At: sent.Add(-30 * time.Second), Lane: LanePlain, Method: "GET", Host: "shop.example", Port: 443, Path: "/p", QueryHash: QueryHash("q=1"), Source: ours},
		{At: sent.Add(time.Second), Lane: LaneRobots, Method: "GET", Host: "shop.example", Port: 443, Path: "/robots.txt", Source: ours},
	}
	cfg := Config{Token: "LektaBot", PlainUA: "LektaBot/1.0 (+https://lekta.dev/bot)", Egress: []netip.Addr{netip.MustParseAddr("203.0.113.9")}}
	v := New(recs, cfg)
	line := func(at time.Time, client, req, ua string) string {
		return client + ` - - [` + at.Format(logTime) + `] "` + req + `" 200 10 "-" "` + ua + `"`
	}
	render := "Mozilla/5.0 Chrome/140 LektaBot/1.0"
	cases := []struct {
		name  string
		line  string
		match bool
		lane  string
	}{
		{"ours", line(sent, "198.51.100.4", "GET /p?q=1 HTTP/1.1", render), true, LaneRender},
		{"ours, other time zone", line(sent.In(time.FixedZone("", -5*3600)), "198.51.100.4", "GET /p?q=1 HTTP/1.1", render), true, LaneRender},
		{"4 s later", line(sent.Add(4*time.Second), "198.51.100.4", "GET /p?q=1 HTTP/1.1", render), true, LaneRender},
		{"10 s later", line(sent.Add(10*time.Second), "198.51.100.4", "GET /p?q=1 HTTP/1.1", render), false, ""},
		{"10 s earlier", line(sent.Add(-10*time.Second), "198.51.100.4", "GET /p?q=1 HTTP/1.1", render), false, ""},
		{"another path", line(sent, "198.51.100.4", "GET /other HTTP/1.1", render), false, ""},
		{"another query", line(sent, "198.51.100.4", "GET /p?q=2 HTTP/1.1", render), false, ""},
		{"no query", line(sent, "198.51.100.4", "GET /p HTTP/1.1", render), false, ""},
		{"another method", line(sent, "198.51.100.4", "HEAD /p?q=1 HTTP/1.1", render), false, ""},
		{"another source", line(sent, "198.51.100.5", "GET /p?q=1 HTTP/1.1", render), false, ""},
		{"egress address", line(sent, "203.0.113.9", "GET /p?q=1 HTTP/1.1", render), true, LaneRender},
		{"not our agent", line(sent, "198.51.100.4", "GET /p?q=1 HTTP/1.1", "curl/8.0"), false, ""},
		{"plain agent finds the plain record only", line(sent.Add(-30*time.Second), "198.51.100.4", "GET /p?q=1 HTTP/1.1", cfg.PlainUA), true, LanePlain},
		{"plain agent, render request", line(sent, "198.51.100.4", "GET /p?q=1 HTTP/1.1", cfg.PlainUA), false, ""},
		{"robots.txt", line(sent, "198.51.100.4", "GET /robots.txt HTTP/1.1", cfg.PlainUA), true, LaneRobots},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ParseLine(tc.line, "shop.example")
			if err != nil {
				t.Fatal(err)
			}
			a, err := v.Verify(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if a.Match != tc.match || a.Lane != tc.lane {
				t.Fatalf("Verify = %+v, want match %v lane %q", a, tc.match, tc.lane)
			}
			s := a.Sentence()
			if tc.match {
				if !a.At.Equal(recs[0].At) && tc.lane == LaneRender {
					t.Errorf("At = %v, want the record's %v", a.At, recs[0].At)
				}
				if !strings.Contains(s, "from "+c.Client.String()+" by "+laneWords(tc.lane)) {
					t.Errorf("Sentence = %q", s)
				}
			} else if s != "No LektaBot request to shop.example matches within ±5 s: the request was not ours." {
				t.Errorf("Sentence = %q", s)
			}
		})
	}
	a, _ := v.Verify(context.Background(), mustParse(t, line(sent, "198.51.100.4", "GET /p?q=1 HTTP/1.1", render)))
	if got := a.Sentence(); got != "A LektaBot request matching this line was made at 12:03:41.208 UTC from 198.51.100.4 by the browser render (headless Chromium)." {
		t.Errorf("Sentence = %q", got)
	}
}

func mustParse(tb testing.TB, line string) Claim {
	tb.Helper()
	c, err := ParseLine(line, "shop.example")
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestQueryHash(t *testing.T) {
	if QueryHash("") != "" {
		t.Error(`QueryHash("") is not empty`)
	}
	h := QueryHash("utm=secret")
	if len(h) != 32 || strings.Contains(h, "secret") || h == QueryHash("utm=secret2") {
		t.Errorf("QueryHash = %q", h)
	}
}
