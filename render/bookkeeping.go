package render

import (
	"errors"
	"io"
	"sync"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// redirectBook follows redirect chains through the proxy: each 3xx
// response notes the depth its Location will be requested at, so a chain of
// any kind of request (script, stylesheet, fetch, worker, EventSource) is
// cut after MaxRedirects hops. Chromium itself would follow 20.
//
// A Location and the request it causes meet under chainKey: the Location
// read as Chromium reads it (policy.ResolveLocation), the request's URL as
// Chromium sent it, both normalised once more the same way.
type redirectBook struct {
	mu    sync.Mutex
	depth map[string]int // chain key -> redirects that led to it
}

// take returns how many redirects led to the request for raw, an absolute
// URL as the browser sent it (0 for a fresh request), and forgets it, so a
// later request of the same URL starts afresh.
func (b *redirectBook) take(raw string) int {
	key, ok := chainKey(raw, "")
	if !ok {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.depth[key]
	delete(b.depth, key)
	return d
}

// note records that the response to base at depth redirects to loc.
func (b *redirectBook) note(base, loc string, depth int) {
	key, ok := chainKey(base, loc)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.depth == nil {
		b.depth = make(map[string]int)
	}
	if len(b.depth) >= maxGone {
		clear(b.depth)
	}
	b.depth[key] = max(b.depth[key], depth+1)
}

// chainKey is the URL Chromium requests for loc relative to base (for base
// itself when loc is empty) with every escape decoded, so that a byte
// Chromium escapes where the model does not (or the other way round)
// still meets its request. Two URLs that differ only in how they are
// escaped share a key: a chain is then counted as deeper, never shallower.
func chainKey(base, loc string) (string, bool) {
	u, err := policy.ResolveLocation(base, loc)
	if err != nil {
		return "", false
	}
	return policy.UnescapeAll(u), true
}

// admit counts one request and reports whether it fits the budget.
func (p *proxy) admit() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.budget.requests > 0 && p.requests >= p.budget.requests {
		return false
	}
	p.requests++
	return true
}

// spend counts n relayed bytes and reports whether they fit the budget.
func (p *proxy) spend(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bytes += n
	return p.budget.bytes <= 0 || p.bytes <= p.budget.bytes
}

// block records a refused request.
func (p *proxy) block(reason, u, rule string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked[reason]++
	if len(p.blockedURLs) < maxBlockedURLs {
		p.blockedURLs = append(p.blockedURLs, compare.BlockedRequest{URL: truncateURL(u), Reason: reason, Rule: rule})
	}
}

var errBudget = errors.New("audit byte budget exhausted")

// countingBody is a response body that stops when the budget runs out.
type countingBody struct {
	io.ReadCloser
	p    *proxy
	over bool
}

func (b *countingBody) Read(buf []byte) (int, error) {
	if b.over {
		return 0, errBudget
	}
	n, err := b.ReadCloser.Read(buf)
	if n > 0 && !b.p.spend(int64(n)) {
		b.over = true
		b.p.block(ReasonBudget, "response body", "")
		return 0, errBudget
	}
	return n, err
}
