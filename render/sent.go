package render

import (
	"context"
	"net"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"sync"
	"time"
)

// Sent is one request the render lane's proxy forwarded to a site: it left
// through the guard and reached the site's address. Requests the lane
// refused before they left (trackers, images by their destination, robots
// rules, methods, the budget) are never Sent.
type Sent struct {
	// At is when the request's headers were written to the connection.
	At time.Time
	// Method and URL of the request as it left (scheme, host, path, query).
	Method string
	URL    *url.URL
	// Remote is the site's address the connection reached; Local the
	// address and port it left from.
	Remote, Local netip.AddrPort
	// Status is the site's response status, 0 when Err is set.
	Status int
	// Err is why no response arrived, or why reading its body stopped.
	Err error
	// Bytes is how much of the response body was relayed.
	Bytes int64
}

// sentTrace follows one forwarded request: its connection's addresses and
// when it was written, reported once through report.
type sentTrace struct {
	report func(Sent)

	mu   sync.Mutex
	s    Sent
	conn bool
	done bool
}

// newSentTrace starts following a request for u; report nil follows nothing.
func newSentTrace(report func(Sent), method string, u *url.URL) *sentTrace {
	if report == nil {
		return nil
	}
	return &sentTrace{report: report, s: Sent{Method: method, URL: cloneURL(u), At: time.Now()}}
}

// with returns ctx with a ClientTrace that notes the connection and the time
// the headers were written.
func (t *sentTrace) with(ctx context.Context) context.Context {
	if t == nil {
		return ctx
	}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(ci httptrace.GotConnInfo) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.s.Remote, t.s.Local = AddrPortOf(ci.Conn.RemoteAddr()), AddrPortOf(ci.Conn.LocalAddr())
			t.conn = true
		},
		WroteHeaders: func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.s.At = time.Now()
		},
	})
}

// finish reports the request once, if it reached a connection.
func (t *sentTrace) finish(status int, bytes int64, err error) {
	if t == nil {
		return
	}
	t.mu.Lock()
	if t.done || !t.conn {
		t.mu.Unlock()
		return
	}
	t.done = true
	s := t.s
	t.mu.Unlock()
	s.Status, s.Bytes, s.Err = status, bytes, err
	t.report(s)
}

// AddrPortOf reads a connection address (a *net.TCPAddr, or any
// "ip:port"); the zero value when it is neither.
func AddrPortOf(a net.Addr) netip.AddrPort {
	if a == nil {
		return netip.AddrPort{}
	}
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort()
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.AddrPort{}
	}
	return ap
}
