package server

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"lekta.dev/lekta/cache"
)

// clientAddr is the address a request came from: the peer, or, when the
// peer is a trusted proxy, the right-most X-Forwarded-For entry that is not
// itself a trusted proxy.
func clientAddr(r *http.Request, trusted []netip.Prefix) string {
	peer := parseAddr(r.RemoteAddr)
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	if !inAny(peer, trusted) {
		return peer.String()
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a := parseAddr(strings.TrimSpace(hops[i]))
		if !a.IsValid() {
			break // a garbled entry: trust nothing left of it
		}
		client = a
		if !inAny(a, trusted) {
			break
		}
	}
	return client.String()
}

// parseAddr reads "ip", "ip:port" or "[ipv6]:port", unmapping IPv4-in-IPv6.
func parseAddr(s string) netip.Addr {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientKey groups addresses into one client: an IPv4 address, or the /64
// of an IPv6 address (one subscriber usually holds a whole /64).
func clientKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil || a.Is4() {
		return addr
	}
	p, err := a.Prefix(64)
	if err != nil {
		return addr
	}
	return p.String()
}

// clientLimiter is an in-memory sliding log of submissions per client,
// per process: with several instances each keeps its own.
type clientLimiter struct {
	windows []cache.Window
	longest time.Duration
	now     func() time.Time

	mu    sync.Mutex
	logs  map[string][]time.Time
	calls int
}

// sweepEvery is how many calls pass between sweeps of idle clients.
const sweepEvery = 1024

func newClientLimiter(ws []cache.Window, now func() time.Time) *clientLimiter {
	l := &clientLimiter{windows: ws, now: now, logs: map[string][]time.Time{}}
	for _, w := range ws {
		l.longest = max(l.longest, w.Per)
	}
	return l
}

// allow records a submission of addr if every window has room; otherwise
// it records nothing and returns how long until the longest violated
// window has room.
func (l *clientLimiter) allow(addr string) (time.Duration, bool) {
	key := clientKey(addr)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.calls%sweepEvery == 0 {
		l.sweep(now)
	}
	log := trim(l.logs[key], now.Add(-l.longest))
	var wait time.Duration
	for _, w := range l.windows {
		// Starts inside (now-Per, now]; the log is oldest first.
		from := now.Add(-w.Per)
		n, first := 0, -1
		for i, t := range log {
			if t.After(from) {
				if first < 0 {
					first = i
				}
				n++
			}
		}
		if n >= w.N {
			// Room comes when the (n-N+1)-th oldest start in the window leaves it.
			wait = max(wait, log[first+n-w.N].Add(w.Per).Sub(now))
		}
	}
	if wait > 0 {
		l.logs[key] = log
		return wait, false
	}
	l.logs[key] = append(log, now)
	return 0, true
}

// refund forgets addr's latest submission, which turned out to be answered
// from the cache.
func (l *clientLimiter) refund(addr string) {
	key := clientKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	if log := l.logs[key]; len(log) > 0 {
		l.logs[key] = log[:len(log)-1]
	}
}

// trim drops the starts at or before cut.
func trim(log []time.Time, cut time.Time) []time.Time {
	i := 0
	for i < len(log) && !log[i].After(cut) {
		i++
	}
	return log[i:]
}

// sweep forgets clients whose log is empty; l.mu is held.
func (l *clientLimiter) sweep(now time.Time) {
	cut := now.Add(-l.longest)
	for k, log := range l.logs {
		if len(trim(log, cut)) == 0 {
			delete(l.logs, k)
		}
	}
}
