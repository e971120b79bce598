package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"code.dny.dev/ssrf"
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

// Limits and defaults of the guard, published on the /bot page.
const (
	// MaxURLBytes is the longest target URL accepted, before and after normalisation.
	MaxURLBytes = 2048
	// DefaultDialTimeout bounds one connection attempt when GuardConfig.DialTimeout is 0.
	DefaultDialTimeout = 10 * time.Second
	// MaxDialAttempts is how many of a name's addresses one dial tries, in
	// the resolver's order.
	MaxDialAttempts = 4
	// MaxResponseHeaderBytes caps the response headers Transport reads.
	MaxResponseHeaderBytes = 64 << 10
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
	// Resolve rules apply before DNS, in both lanes. The address a rule
	// names is still checked like any resolved address, so a rule pointing
	// at a private address also needs that address:port in AllowAddrs. A
	// target whose host:port has a rule skips the name and port refusals of
	// ParseTarget (no DNS is asked for it).
	Resolve []ResolveRule
	// AllowAddrs are exact private/loopback address:port pairs that may be
	// dialled. An exact pair wins over every refusal, DenyPrefixes included;
	// the same address on another port stays refused.
	AllowAddrs []netip.AddrPort
	// AllowPorts are ports besides 80 and 443 that targets may use.
	AllowPorts []uint16
	// DenyPrefixes are extra prefixes to refuse (an operator's own VPC ranges).
	DenyPrefixes []netip.Prefix
	// Resolver defaults to net.DefaultResolver, which is then asked for the
	// rooted name ("example.com.") so resolv.conf search domains never
	// turn a public-looking name into an internal one. A custom Resolver is
	// asked for the name as written, without a trailing dot.
	Resolver Resolver
	// DialTimeout bounds one connection attempt; default 10s.
	DialTimeout time.Duration
}

// Guard is the one SSRF boundary: it validates target URLs before any network
// activity and checks every resolved address at connect time. Build it with
// NewGuard; it is safe for concurrent use.
type Guard struct {
	cfg      GuardConfig
	rules    map[ruleKey]netip.AddrPort
	allow    map[netip.AddrPort]struct{}
	deny     []netip.Prefix
	resolver Resolver
	rooted   bool // ask the resolver for "name." (the default resolver only)
	guardian *ssrf.Guardian
}

// ruleKey is the HOST:PORT a ResolveRule matches.
type ruleKey struct {
	host string
	port uint16
}

// NewGuard returns a Guard for cfg, after checking every entry of it; the
// error names the entry at fault.
func NewGuard(cfg GuardConfig) (*Guard, error) {
	g := &Guard{
		rules:    make(map[ruleKey]netip.AddrPort, len(cfg.Resolve)),
		allow:    make(map[netip.AddrPort]struct{}, len(cfg.AllowAddrs)),
		resolver: cfg.Resolver,
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
		g.rooted = true
	}
	if cfg.DialTimeout < 0 {
		return nil, fmt.Errorf("new guard: negative dial timeout %v", cfg.DialTimeout)
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	for _, p := range cfg.AllowPorts {
		if p == 0 {
			return nil, errors.New("new guard: allowed port 0 is not a port")
		}
	}
	allow := make([]netip.AddrPort, 0, len(cfg.AllowAddrs))
	for _, ap := range cfg.AllowAddrs {
		ap, err := checkAllowAddr(ap)
		if err != nil {
			return nil, fmt.Errorf("new guard: %w", err)
		}
		g.allow[ap] = struct{}{}
		allow = append(allow, ap)
	}
	cfg.AllowAddrs = allow
	cfg.AllowPorts = append([]uint16(nil), cfg.AllowPorts...)
	for _, p := range cfg.DenyPrefixes {
		p, err := checkDenyPrefix(p)
		if err != nil {
			return nil, fmt.Errorf("new guard: %w", err)
		}
		g.deny = append(g.deny, p)
	}
	cfg.DenyPrefixes = g.deny
	rules, err := normaliseRules(cfg.Resolve)
	if err != nil {
		return nil, fmt.Errorf("new guard: %w", err)
	}
	for _, r := range rules {
		k := ruleKey{r.Host, r.Port}
		if _, dup := g.rules[k]; dup {
			return nil, fmt.Errorf("new guard: two resolve rules for %s:%d", r.Host, r.Port)
		}
		g.rules[k] = r.Addr
	}
	cfg.Resolve = rules
	g.cfg = cfg
	g.guardian = g.newGuardian()
	return g, nil
}

// normaliseRules returns copies of rules with hosts in their ASCII form and
// addresses unmapped and given a port.
func normaliseRules(rules []ResolveRule) ([]ResolveRule, error) {
	out := make([]ResolveRule, 0, len(rules))
	for _, r := range rules {
		name, err := ruleHost(r.Host)
		if err != nil {
			return nil, fmt.Errorf("resolve rule for %q: %w", r.Host, err)
		}
		if r.Port == 0 {
			return nil, fmt.Errorf("resolve rule for %q: port 0 is not a port", r.Host)
		}
		if !r.Addr.Addr().IsValid() {
			return nil, fmt.Errorf("resolve rule for %s:%d: no address", name, r.Port)
		}
		if r.Addr.Addr().Zone() != "" {
			return nil, fmt.Errorf("resolve rule for %s:%d: zoned address %s", name, r.Port, r.Addr.Addr())
		}
		port := r.Addr.Port()
		if port == 0 {
			port = r.Port
		}
		out = append(out, ResolveRule{Host: name, Port: r.Port, Addr: netip.AddrPortFrom(r.Addr.Addr().Unmap(), port)})
	}
	return out, nil
}

// newGuardian builds the code.dny.dev/ssrf check that runs, after the
// guard's own, on every socket before it connects.
func (g *Guard) newGuardian() *ssrf.Guardian {
	ports := []uint16{80, 443}
	ports = append(ports, g.cfg.AllowPorts...)
	var v4, v6 []netip.Prefix
	for _, p := range g.deny {
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	return ssrf.New(
		ssrf.WithNetworks("tcp4", "tcp6"),
		ssrf.WithPorts(ports...),
		ssrf.WithDeniedV4Prefixes(v4...),
		ssrf.WithDeniedV6Prefixes(v6...),
	)
}

// Config returns the guard's configuration as normalised by NewGuard
// (rule hosts in ASCII, addresses unmapped, default dial timeout filled in).
func (g *Guard) Config() GuardConfig {
	c := g.cfg
	c.Resolve = append([]ResolveRule(nil), c.Resolve...)
	c.AllowAddrs = append([]netip.AddrPort(nil), c.AllowAddrs...)
	c.AllowPorts = append([]uint16(nil), c.AllowPorts...)
	c.DenyPrefixes = append([]netip.Prefix(nil), c.DenyPrefixes...)
	return c
}

// Transport returns an http.Transport that dials only through the guard,
// ignores environment proxies and caps response headers. HTTP/2 is
// attempted over TLS; its connections are dialled through the guard too.
// Compression is off because the plain lane decodes gzip, deflate and br
// itself. Each call returns a new Transport the caller may tune further.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            g.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  30 * time.Second,
		ExpectContinueTimeout:  time.Second,
		IdleConnTimeout:        30 * time.Second,
		MaxIdleConns:           16,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		DisableCompression:     true,
	}
}

// lowerASCII lower-cases ASCII letters only.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
