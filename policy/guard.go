package policy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"
)

// Errors callers branch on.
var (
	// ErrInvalidURL: the input is not a usable http(s) URL (CLI exit 2, API 400 invalid_url).
	ErrInvalidURL = errors.New("invalid URL")
	// ErrTargetRefused: a well-formed URL LektaBot will not fetch (CLI exit 2, API 403 target_refused).
	ErrTargetRefused = errors.New("target refused")
	// ErrBlockedAddress: a connection to a denied address was refused at dial time.
	ErrBlockedAddress = errors.New("blocked address")
)

// Resolver looks up a host's addresses; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ResolveRule maps HOST:PORT to an address, like curl's --resolve.
type ResolveRule struct {
	Host string
	Port uint16
	// Addr is where to connect; its port is Port when the rule gave none.
	Addr netip.AddrPort
}

// GuardConfig configures a Guard.
type GuardConfig struct {
	// Resolve rules apply before DNS, in both lanes.
	Resolve []ResolveRule
	// AllowAddrs are exact private/loopback address:port pairs that may be dialled.
	AllowAddrs []netip.AddrPort
	// AllowPorts are ports besides 80 and 443 that targets may use.
	AllowPorts []uint16
	// DenyPrefixes are extra prefixes to refuse (an operator's own VPC ranges).
	DenyPrefixes []netip.Prefix
	// Resolver defaults to net.DefaultResolver.
	Resolver Resolver
	// DialTimeout bounds one connection attempt; default 10s.
	DialTimeout time.Duration
}

// Guard is the one SSRF boundary: it validates target URLs before any network
// activity and checks every resolved address at connect time.
type Guard struct {
	cfg GuardConfig
}

// NewGuard returns a Guard for cfg.
func NewGuard(cfg GuardConfig) (*Guard, error) {
	return &Guard{cfg: cfg}, nil
}

// ParseTarget parses, normalises and validates a submitted URL without any
// network activity. Errors wrap ErrInvalidURL or ErrTargetRefused.
func (g *Guard) ParseTarget(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.Join(ErrInvalidURL, err)
	}
	return u, nil
}

// CheckURL validates an absolute URL met later (a redirect hop, a
// navigation) by the same rules as ParseTarget.
func (g *Guard) CheckURL(u *url.URL) error {
	return nil
}

// DialContext dials addr after resolving it (Resolve rules first) and
// checking every candidate address; refused addresses wrap ErrBlockedAddress.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// Transport returns an http.Transport that dials only through the guard,
// ignores environment proxies and caps response headers.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{Proxy: nil, DialContext: g.DialContext}
}
