package audit

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"lekta.dev/lekta/internal/endbody"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/render"
	"lekta.dev/lekta/verify"
)

// RequestWriter keeps request records; *records.DB implements it.
type RequestWriter interface {
	PutRequests(ctx context.Context, rs []records.Request) error
}

var _ RequestWriter = (*records.DB)(nil)

// requestBatch is how many records an audit collects before it writes
// them; the rest are written once when the audit ends.
const requestBatch = 256

// requestLog collects the request records of one audit and writes them in
// batches, so an audit pays no round trip per request. A failure to write
// is logged: records are an aid to site operators, not a precondition of
// an audit. Records arriving after close (a render body still streaming
// when the render ended) are dropped.
type requestLog struct {
	w   RequestWriter
	id  string
	now func() time.Time
	log *slog.Logger

	mu      sync.Mutex
	pending []records.Request
	closed  bool
	writes  sync.WaitGroup
}

// newRequestLog returns the log of audit id; nil (records off) when w is nil.
func newRequestLog(w RequestWriter, id string, now func() time.Time, log *slog.Logger) *requestLog {
	if w == nil {
		return nil
	}
	return &requestLog{w: w, id: id, now: now, log: log}
}

// add keeps one record, writing a full batch in the background.
func (l *requestLog) add(r records.Request) {
	if l == nil {
		return
	}
	r.AuditID = l.id
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.pending = append(l.pending, r)
	if len(l.pending) >= requestBatch {
		batch := l.pending
		l.pending = nil
		l.writes.Go(func() { l.write(batch) })
	}
}

// close writes what is left and waits for the batches in flight.
func (l *requestLog) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.closed = true
	batch := l.pending
	l.pending = nil
	l.mu.Unlock()
	l.write(batch)
	l.writes.Wait()
}

func (l *requestLog) write(batch []records.Request) {
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := l.w.PutRequests(ctx, batch); err != nil {
		l.log.Warn("store request records", "id", l.id, "count", len(batch), "err", err)
	}
}

// sent records a request the render lane reports.
func (l *requestLog) sent(s render.Sent) {
	if l == nil {
		return
	}
	l.add(requestRecord(s.At, verify.LaneRender, s.Method, s.URL, s.Remote, s.Local, s.Status, s.Err, s.Bytes))
}

// requestRecord makes a record of derived values only: the query as a hash.
func requestRecord(at time.Time, lane, method string, u *url.URL, remote, local netip.AddrPort, status int, err error, n int64) records.Request {
	r := records.Request{
		At: at.UTC().Truncate(time.Millisecond), Lane: lane, Method: method,
		Scheme: u.Scheme, Host: u.Hostname(), Path: u.EscapedPath(), QueryHash: verify.QueryHash(u.RawQuery),
		Remote: remote, Local: local, Status: status, Bytes: n,
	}
	if r.Path == "" {
		r.Path = "/"
	}
	r.Port, _ = strconv.Atoi(u.Port())
	if r.Port == 0 {
		r.Port = 80
		if u.Scheme == "https" {
			r.Port = 443
		}
	}
	if err != nil {
		r.ErrorClass = errorClass(err)
	}
	return r
}

// errorClass names why a request got no (complete) response, in one word.
func errorClass(err error) string {
	var ne net.Error
	var te *tls.CertificateVerificationError
	var re tls.RecordHeaderError
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF):
		return "reset"
	case errors.As(err, &te), errors.As(err, &re):
		return "tls"
	}
	return "error"
}

// recordingTransport records each request of one lane (robots.txt, the
// plain lane's hops) that reached a connection: the addresses come from
// httptrace, the record is kept when the body ends.
type recordingTransport struct {
	next http.RoundTripper
	lane string
	log  *requestLog
}

// transportFor wraps next for lane; next itself when records are off.
func (l *requestLog) transportFor(next http.RoundTripper, lane string) http.RoundTripper {
	if l == nil {
		return next
	}
	return recordingTransport{next: next, lane: lane, log: l}
}

// RoundTrip sends req and records it.
func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tr := &hopTrace{log: t.log, lane: t.lane, method: req.Method, url: req.URL, at: t.log.now()}
	ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(ci httptrace.GotConnInfo) {
			tr.mu.Lock()
			defer tr.mu.Unlock()
			tr.remote, tr.local, tr.conn = render.AddrPortOf(ci.Conn.RemoteAddr()), render.AddrPortOf(ci.Conn.LocalAddr()), true
		},
		WroteHeaders: func() {
			tr.mu.Lock()
			defer tr.mu.Unlock()
			tr.at = t.log.now()
		},
	})
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		tr.finish(0, 0, err)
		return nil, err
	}
	status := resp.StatusCode
	resp.Body = &endbody.Body{ReadCloser: resp.Body, Done: func(n int64, err error) { tr.finish(status, n, err) }}
	return resp, nil
}

// hopTrace is one request of recordingTransport, recorded once.
type hopTrace struct {
	log    *requestLog
	lane   string
	method string
	url    *url.URL

	mu            sync.Mutex
	at            time.Time
	remote, local netip.AddrPort
	conn, done    bool
}

func (h *hopTrace) finish(status int, n int64, err error) {
	h.mu.Lock()
	if h.done || !h.conn {
		h.mu.Unlock()
		return
	}
	h.done = true
	at, remote, local := h.at, h.remote, h.local
	h.mu.Unlock()
	h.log.add(requestRecord(at, h.lane, h.method, h.url, remote, local, status, err, n))
}
