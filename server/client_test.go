package server

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
)

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}
	cases := []struct {
		name    string
		remote  string
		xff     []string
		trusted []netip.Prefix
		want    string
	}{
		{"direct", "203.0.113.7:5555", nil, trusted, "203.0.113.7"},
		{"untrusted peer's header ignored", "203.0.113.7:5555", []string{"198.51.100.1"}, trusted, "203.0.113.7"},
		{"no proxies configured", "10.0.0.2:1", []string{"198.51.100.1"}, nil, "10.0.0.2"},
		{"trusted proxy", "10.0.0.2:1", []string{"198.51.100.1"}, trusted, "198.51.100.1"},
		{"right-most untrusted wins", "10.0.0.2:1", []string{"1.2.3.4, 198.51.100.1, 10.0.0.9"}, trusted, "198.51.100.1"},
		{"several headers", "10.0.0.2:1", []string{"1.2.3.4", "198.51.100.1"}, trusted, "198.51.100.1"},
		{"garbage stops the walk", "10.0.0.2:1", []string{"198.51.100.1, bogus"}, trusted, "10.0.0.2"},
		{"all trusted", "10.0.0.2:1", []string{"10.1.1.1"}, trusted, "10.1.1.1"},
		{"ipv6 peer", "[2001:db8::1]:443", []string{"2001:db9::5"}, trusted, "2001:db9::5"},
		{"mapped ipv4", "[::ffff:203.0.113.7]:1", nil, trusted, "203.0.113.7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/audits", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientAddr(r, tc.trusted); got != tc.want {
				t.Errorf("clientAddr = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClientKeyGroupsIPv6Subnets(t *testing.T) {
	if a, b := clientKey("2001:db8:1:2::1"), clientKey("2001:db8:1:2:ffff::9"); a != b {
		t.Errorf("one /64 gave keys %q and %q", a, b)
	}
	if a, b := clientKey("2001:db8:1:2::1"), clientKey("2001:db8:1:3::1"); a == b {
		t.Errorf("two /64s share key %q", a)
	}
	if got := clientKey("192.0.2.1"); got != "192.0.2.1" {
		t.Errorf("IPv4 key %q", got)
	}
}

// fakeClock is a settable clock for the limiter.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func msec(n int) time.Duration           { return time.Duration(n) * time.Millisecond }

func TestClientLimiter(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	l := newClientLimiter([]cache.Window{{N: 2, Per: time.Minute}, {N: 3, Per: time.Hour}}, clock.now)
	step := func(name string, advance time.Duration, addr string, wantOK bool, wantWait time.Duration) {
		t.Helper()
		clock.add(advance)
		wait, ok := l.allow(addr)
		if ok != wantOK || wait != wantWait {
			t.Fatalf("%s: allow = (%v, %v), want (%v, %v)", name, wait, ok, wantWait, wantOK)
		}
	}
	step("first", 0, "a", true, 0)
	step("second, 10s later", 10*time.Second, "a", true, 0)
	step("third hits 2/1m", 10*time.Second, "a", false, 40*time.Second)
	step("another client is independent", 0, "b", true, 0)
	step("refusals are not counted", 39*time.Second+msec(999), "a", false, msec(1))
	step("the first start leaves the minute", msec(1), "a", true, 0)
	step("fourth hits 3/1h, the longer wait", time.Minute, "a", false, time.Hour-2*time.Minute)
}

func TestClientLimiterForgetsIdleClients(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	l := newClientLimiter([]cache.Window{{N: 1, Per: time.Second}}, clock.now)
	for i := range sweepEvery {
		l.allow(netip.AddrFrom4([4]byte{192, 0, byte(i >> 8), byte(i)}).String())
		clock.add(10 * time.Second)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.logs) > 1 {
		t.Errorf("%d idle clients kept after a sweep", len(l.logs))
	}
}
