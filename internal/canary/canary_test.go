package canary_test

import (
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/canary"
)

// reach connects to addr over network, sends line and waits until the
// canary has closed the connection (TCP) or the datagram is sent (UDP).
func reach(tb testing.TB, network, addr, line string) {
	tb.Helper()
	conn, err := net.Dial(network, addr)
	if err != nil {
		tb.Fatalf("dial %s %s: %v", network, addr, err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, line); err != nil {
		tb.Fatalf("write to %s: %v", addr, err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		_, _ = io.Copy(io.Discard, conn)
	}
}

// TestLoopbackRecordsEverything: each TCP connection and UDP datagram to a
// loopback canary, and to its extra address, is one hit naming what came.
func TestLoopbackRecordsEverything(t *testing.T) {
	t.Parallel()
	// The extra address is one that was free a moment ago.
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	extra := l.Addr().String()
	l.Close()
	c := canary.Loopback(t, extra)
	c.CheckZero(t)
	v4 := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port()))
	v6 := net.JoinHostPort("::1", strconv.Itoa(c.Port6()))
	reach(t, "tcp", v4, "GET /v4 HTTP/1.1\r\nHost: x\r\n\r\n")
	reach(t, "tcp", extra, "GET /extra HTTP/1.1\r\n")
	want := []string{`"GET /v4 HTTP/1.1"`, `"GET /extra HTTP/1.1"`}
	if c.Bound("::1") {
		reach(t, "tcp", v6, "GET /v6 HTTP/1.1\r\n")
		want = append(want, `"GET /v6 HTTP/1.1"`)
	}
	hits := c.Hits()
	if len(hits) != len(want) || c.Count() != len(want) {
		t.Fatalf("hits %q (count %d), want %d", hits, c.Count(), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(hits[i], "tcp ") || !strings.HasSuffix(hits[i], w) {
			t.Errorf("hit %d is %q, want a TCP connection that sent %s", i, hits[i], w)
		}
	}

	// A datagram is recorded some time after it is sent: poll for it.
	reach(t, "udp", v4, "stun")
	waitCount(t, c, len(want)+1)
	if last := c.Hits()[len(want)]; !strings.HasPrefix(last, "udp ") || !strings.HasSuffix(last, ": 4 bytes") {
		t.Errorf("the datagram was recorded as %q", last)
	}
}

// waitCount waits until the canary has n hits, failing if it gets more or
// they do not come.
func waitCount(tb testing.TB, c *canary.Canary, n int) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if got := c.Count(); got >= n {
			if got > n {
				tb.Fatalf("canary has %d hits, want %d: %q", got, n, c.Hits())
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.Fatalf("canary has %d hits, want %d: %q", c.Count(), n, c.Hits())
}

// TestListen: the first address must bind and picks the port for the rest;
// the others are best effort and say so through Bound.
func TestListen(t *testing.T) {
	t.Parallel()
	first := canary.Listen(t, 0, "127.0.0.1")
	second := canary.Listen(t, first.Port(), "127.0.0.2", "127.0.0.1")
	if second.Port() != first.Port() || !second.Bound("127.0.0.2") || second.Bound("127.0.0.1") {
		t.Fatalf("second canary on port %d, bound 127.0.0.2 %v, 127.0.0.1 %v; want port %d, true, false (taken by the first)",
			second.Port(), second.Bound("127.0.0.2"), second.Bound("127.0.0.1"), first.Port())
	}
	reach(t, "tcp", second.HostPort("127.0.0.2"), "")
	reach(t, "tcp", second.HostPort("127.0.0.2"), "")
	if first.Count() != 0 || second.Count() != 2 {
		t.Errorf("counts %d and %d, want 0 and 2", first.Count(), second.Count())
	}
}
