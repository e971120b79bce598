package render

import (
	"time"

	"github.com/chromedp/cdproto/network"
)

// An EventSource stays open by design, so it cannot hold a render up until
// it ends. A page that opened one is usually waiting for its first message,
// though; the completeness rule waits up to streamGrace of wall time for
// that, and no longer.
//
// A WebSocket never opens: the proxy refuses every upgrade, as Googlebot's
// renderer does. It counts as in flight until Chromium reports it closed,
// and the page then gets one more grant of page time to react (to fall
// back to polling, say), even at the end of its budget. Chromium's virtual
// time does not stop for a connecting WebSocket as it does for a fetch, so
// after a grant that leaves one connecting the rule waits up to socketWait
// of wall time for the refusal before granting more page time.

// streamGrace is how long an EventSource may take to deliver its first
// message.
const streamGrace = 500 * time.Millisecond

// socketWait bounds the wall time the rule waits for a refused WebSocket
// to close.
const socketWait = 2 * time.Second

// stream is one open long-lived connection.
type stream struct {
	opened time.Time
	// heard is set once a message arrived.
	heard bool
	// fetch marks an EventSource: to Chromium a request that never ends,
	// which would hold page time still (see grantPolicy). Other streams
	// are WebSockets.
	fetch bool
}

// streamOpened records a WebSocket or EventSource.
func (n *netTracker) streamOpened(id network.RequestID, fetch bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.streams == nil {
		n.streams = make(map[network.RequestID]*stream)
	}
	if len(n.streams) < maxGone {
		n.streams[id] = &stream{opened: time.Now(), fetch: fetch}
	}
}

// streamHeard records a message on a stream.
func (n *netTracker) streamHeard(id network.RequestID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.streams[id]; s != nil && !s.heard {
		s.heard = true
		n.signal()
	}
}

// streamClosed forgets a stream.
func (n *netTracker) streamClosed(id network.RequestID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s, ok := n.streams[id]; ok {
		delete(n.streams, id)
		if !s.fetch {
			n.socketClosed = true
		}
		n.signal()
	}
}

// sockets reports whether a WebSocket is still open; n.mu is held.
func (n *netTracker) sockets() bool {
	for _, s := range n.streams {
		if !s.fetch {
			return true
		}
	}
	return false
}

// socketOpen reports whether a WebSocket is still open.
func (n *netTracker) socketOpen() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sockets()
}

// takeSocketClosed reports whether a WebSocket closed since it was last
// asked: the page gets another grant to handle the close.
func (n *netTracker) takeSocketClosed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.socketClosed
	n.socketClosed = false
	return c
}

// streamWait is how long to wait for an open stream's first message (0:
// every stream has spoken, or waited long enough).
func (n *netTracker) streamWait() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	var wait time.Duration
	for _, s := range n.streams {
		if s.fetch && !s.heard {
			wait = max(wait, streamGrace-time.Since(s.opened))
		}
	}
	return max(wait, 0)
}

// onlyStreams reports whether an EventSource is open and nothing else is
// in flight: Chromium would then hold page time still for good.
func (n *netTracker) onlyStreams() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.open) > 0 {
		return false
	}
	for _, s := range n.streams {
		if s.fetch {
			return true
		}
	}
	return false
}

// signal wakes a streamWait waiter; n.mu is held.
func (n *netTracker) signal() {
	select {
	case n.changed <- struct{}{}:
	default:
	}
}
