// Package canary listens, for tests, where nothing may ever connect: a test
// points hostile input at a canary's addresses and checks afterwards that
// the canary saw nothing. It records every TCP connection it accepts (with
// the first line the client sent) and every UDP datagram. It imports no
// package of the project, so the tests of any package may use it.
package canary

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Canary is a set of listeners that record what reaches them.
type Canary struct {
	port, port6 int
	bound       map[string]bool // the IPs listening on port

	mu   sync.Mutex
	hits []string
	lns  []net.Listener
	pcs  []net.PacketConn
	wg   sync.WaitGroup
}

// Listen starts a TCP canary on port (0: a free port, picked by the first
// address) of each of ips, stopped when the test ends. The first address
// must bind; later ones that cannot (no IPv6 loopback, the port taken) are
// logged and left out of Bound.
func Listen(tb testing.TB, port int, ips ...string) *Canary {
	tb.Helper()
	c := &Canary{port: port, bound: map[string]bool{}}
	tb.Cleanup(c.Close)
	for i, ip := range ips {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(c.port)))
		if err != nil {
			if i == 0 {
				tb.Fatalf("canary: listen on %s: %v", ip, err)
			}
			tb.Logf("canary not listening on %s: %v", ip, err)
			continue
		}
		if c.port == 0 {
			c.port = l.Addr().(*net.TCPAddr).Port
		}
		c.bound[ip] = true
		c.serve(l)
	}
	c.port6 = c.port
	return c
}

// Loopback starts a canary on loopback, stopped when the test ends: TCP
// and UDP on a free port of 127.0.0.1 and, where the machine has IPv6, of
// [::1] (the same port when it is free there, see Port6), plus TCP on each
// extra address ("host:port"), which must bind.
func Loopback(tb testing.TB, extra ...string) *Canary {
	tb.Helper()
	c, err := NewLoopback(extra...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	if !c.Bound("::1") {
		tb.Logf("canary: no IPv6 loopback here; [::1] URLs cannot connect anyway")
	}
	return c
}

// NewLoopback is Loopback for a canary that outlives one test (shared by a
// test binary); the caller closes it.
func NewLoopback(extra ...string) (*Canary, error) {
	c := &Canary{bound: map[string]bool{}}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("canary: listen on 127.0.0.1: %w", err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	c.bound["127.0.0.1"] = true
	c.serve(ln)
	c.port6 = c.port
	if ln6, err := net.Listen("tcp6", net.JoinHostPort("::1", strconv.Itoa(c.port))); err == nil {
		c.bound["::1"] = true
		c.serve(ln6)
	} else if ln6, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		c.port6 = ln6.Addr().(*net.TCPAddr).Port
		c.bound["::1"] = true
		c.serve(ln6)
	}
	for _, a := range extra {
		l, err := net.Listen("tcp", a)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("canary: listen on %s: %w", a, err)
		}
		c.serve(l)
	}
	for _, a := range []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)), net.JoinHostPort("::1", strconv.Itoa(c.port6))} {
		if pc, err := net.ListenPacket("udp", a); err == nil {
			c.pcs = append(c.pcs, pc)
			c.wg.Go(func() { c.read(pc) })
		}
	}
	return c, nil
}

// serve records every connection l accepts until l is closed.
func (c *Canary) serve(l net.Listener) {
	c.lns = append(c.lns, l)
	c.wg.Go(func() { c.accept(l) })
}

func (c *Canary) accept(l net.Listener) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		// Read what the client sent, briefly, to say who it was; recorded
		// before the close, so a client that waits for the close finds
		// its connection counted.
		_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		buf := make([]byte, 200)
		n, _ := conn.Read(buf)
		first, _, _ := strings.Cut(string(buf[:n]), "\r\n")
		c.record(fmt.Sprintf("tcp %s from %s: %q", l.Addr(), conn.RemoteAddr(), first))
		conn.Close()
	}
}

func (c *Canary) read(pc net.PacketConn) {
	buf := make([]byte, 2048)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		c.record(fmt.Sprintf("udp %s from %s: %d bytes", pc.LocalAddr(), from, n))
	}
}

func (c *Canary) record(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hits = append(c.hits, s)
}

// Port is the canary's port on 127.0.0.1 (for Listen, on every address).
func (c *Canary) Port() int { return c.port }

// Port6 is the canary's port on [::1]: Port unless that was taken there.
// Without an IPv6 loopback it is Port, where nothing can connect anyway.
func (c *Canary) Port6() int { return c.port6 }

// HostPort is host joined with Port.
func (c *Canary) HostPort(host string) string {
	return net.JoinHostPort(host, strconv.Itoa(c.port))
}

// Bound reports whether the canary listens on Port (Port6 for "::1") of ip.
func (c *Canary) Bound(ip string) bool { return c.bound[ip] }

// Hits describes every connection and datagram that reached the canary so
// far, one string each.
func (c *Canary) Hits() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.hits)
}

// Count is how many connections and datagrams reached the canary so far.
func (c *Canary) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.hits)
}

// CheckZero fails the test if anything reached the canary, listing what.
func (c *Canary) CheckZero(tb testing.TB) {
	tb.Helper()
	if hits := c.Hits(); len(hits) > 0 {
		tb.Errorf("the canary was reached %d times:\n  %s", len(hits), strings.Join(hits, "\n  "))
	}
}

// Close stops every listener and waits for their goroutines. It may be
// called more than once.
func (c *Canary) Close() {
	c.mu.Lock()
	lns, pcs := c.lns, c.pcs
	c.lns, c.pcs = nil, nil
	c.mu.Unlock()
	for _, l := range lns {
		l.Close()
	}
	for _, pc := range pcs {
		pc.Close()
	}
	c.wg.Wait()
}
