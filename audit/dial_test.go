package audit

import (
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"testing"

	"lekta.dev/lekta/policy"
)

// current is the guard of the running test; the shared browser dials through it.
var current struct {
	sync.Mutex
	g *policy.Guard
}

func setGuard(tb testing.TB, g *policy.Guard) {
	current.Lock()
	current.g = g
	current.Unlock()
	tb.Cleanup(func() {
		current.Lock()
		current.g = nil
		current.Unlock()
	})
}

func guardNow() *policy.Guard {
	current.Lock()
	defer current.Unlock()
	return current.g
}

var errNoGuard = errors.New("no test guard set")

func dialVia(ctx context.Context, network, addr string) (net.Conn, error) {
	if g := guardNow(); g != nil {
		return g.DialContext(ctx, network, addr)
	}
	return nil, errNoGuard
}

func checkVia(u *url.URL) error {
	if g := guardNow(); g != nil {
		return g.CheckURL(u)
	}
	return errNoGuard
}
