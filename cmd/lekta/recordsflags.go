package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"time"

	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/verify"
)

// defaultRequestTTL is how long request records are kept: a week, long
// enough for a site operator to ask about a request, short enough to keep
// little.
const defaultRequestTTL = 7 * 24 * time.Hour

// recordsFlags are the request-records flags that audit, serve and
// records share, with the bot's info URL: the lanes send it in their user
// agents, and verification matches the user agents it makes.
type recordsFlags struct {
	requestTTL time.Duration
	egress     listFlag
	// botInfoURL is --bot-info-url; "" is the default identity's (serve
	// sets it to --public-url's /bot first).
	botInfoURL string
}

func (r *recordsFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&r.requestTTL, "request-records-ttl", defaultRequestTTL, "how long a record of each request sent to a site is kept for operators' verification; 0 keeps none")
	fs.StringVar(&r.botInfoURL, "bot-info-url", "", "the address both lanes' user agents name, where site operators read what LektaBot does (default: --public-url followed by /bot when serve has one, else "+policy.DefaultIdentity().InfoURL+")")
	fs.Var(&r.egress, "egress-addr", "IP (repeatable): a public address this instance's requests leave from (behind NAT), accepted by verification as the source of our requests")
}

// parsed checks the flags and returns the egress addresses; errors name the flag.
func (r *recordsFlags) parsed() ([]netip.Addr, error) {
	if r.requestTTL < 0 {
		return nil, fmt.Errorf("--request-records-ttl %s: must be 0 (off) or positive", r.requestTTL)
	}
	if r.botInfoURL != "" {
		if _, err := policy.ParseInfoURL(r.botInfoURL); err != nil {
			return nil, fmt.Errorf("--bot-info-url %q: %w", r.botInfoURL, err)
		}
	}
	var out []netip.Addr
	for _, v := range r.egress {
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, fmt.Errorf("--egress-addr %q: want an IP address: %w", v, err)
		}
		out = append(out, a.Unmap().WithZone(""))
	}
	return out, nil
}

// identity is the bot's identity with --bot-info-url in force; parsed
// checked the URL.
func (r *recordsFlags) identity() policy.Identity {
	id := policy.DefaultIdentity()
	if r.botInfoURL != "" {
		id.InfoURL = r.botInfoURL
	}
	return id
}

// verifyConfig is the matcher's configuration from the flags.
func (r *recordsFlags) verifyConfig(id policy.Identity) (verify.Config, error) {
	egress, err := r.parsed()
	if err != nil {
		return verify.Config{}, err
	}
	return verify.Config{Egress: egress, Token: id.Token, PlainUA: id.PlainUA()}, nil
}

// errNoRecords: records are off, so there is nothing to verify against.
var errNoRecords = errors.New("request records are off (--request-records-ttl 0): there is nothing to verify against")

// publicAddrKnown says whether this instance knows the public address its
// requests leave from: an --egress-addr was given, or the address the
// system would send from (a route lookup, which sends nothing) is public.
func publicAddrKnown(egress []netip.Addr) bool {
	if len(egress) > 0 {
		return true
	}
	for _, probe := range []string{"192.0.2.1:80", "[2001:db8::1]:80"} {
		c, err := net.Dial("udp", probe)
		if err != nil {
			continue
		}
		ap, err := netip.ParseAddrPort(c.LocalAddr().String())
		c.Close()
		if err == nil && isPublic(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// isPublic reports whether a is a global unicast address outside the
// private, shared (CGNAT) and documentation ranges.
func isPublic(a netip.Addr) bool {
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	for _, p := range []string{"100.64.0.0/10", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"} {
		if netip.MustParsePrefix(p).Contains(a) {
			return false
		}
	}
	return true
}
