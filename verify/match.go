package verify

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// The lanes a request record names.
const (
	LaneRobots = "robots"
	LanePlain  = "plain"
	LaneRender = "render"
)

// DefaultWindow is how far a record's time may be from a claim's.
const DefaultWindow = 5 * time.Second

// Record is what the matcher reads of one request record.
type Record struct {
	// At is when the request was sent (milliseconds).
	At time.Time
	// Lane is LaneRobots, LanePlain or LaneRender.
	Lane string
	// Method, Host (lower-case) and Port (the effective one) of the request.
	Method string
	Host   string
	Port   int
	// Path is the request target's path as sent; QueryHash is
	// QueryHash of its query.
	Path, QueryHash string
	// Source is the local address of our connection.
	Source netip.Addr
}

// Store is where the records come from; package records implements it.
type Store interface {
	// Candidates returns the records of host sent within [from, to].
	Candidates(ctx context.Context, host string, from, to time.Time) ([]Record, error)
}

// Config is what the matcher accepts besides the records.
type Config struct {
	// Window is how far a record's time may be from the claim's (plus the
	// claim's precision); DefaultWindow when zero.
	Window time.Duration
	// Egress are public addresses this instance's requests leave from
	// (--egress-addr, behind NAT): a claim from one of them matches on
	// source whatever our connection's local address was.
	Egress []netip.Addr
	// Token is the bot's user-agent token (LektaBot); a claim whose user
	// agent does not name it is not ours.
	Token string
	// PlainUA is the exact user agent of robots.txt and plain-lane
	// requests; a claim with it matches only those, a claim with another
	// agent naming Token only render-lane requests.
	PlainUA string
}

// Answer is the verdict on one claim: yes or no, and for yes the time,
// source and lane of the matching request. It holds nothing else.
type Answer struct {
	Match bool
	// At is when the matching request was sent, to the millisecond.
	At time.Time
	// Source is the claim's client address, which the record matched.
	Source netip.Addr
	// Lane is the matching request's lane.
	Lane string
	// Host is the claim's host, for the sentence of a no.
	Host string
	// Window is the time window searched.
	Window time.Duration
}

// Sentence says the answer in words.
func (a Answer) Sentence() string {
	if a.Match {
		return fmt.Sprintf("A LektaBot request matching this line was made at %s UTC from %s by %s.",
			a.At.UTC().Format("15:04:05.000"), a.Source, laneWords(a.Lane))
	}
	return fmt.Sprintf("No LektaBot request to %s matches within ±%g s: the request was not ours.",
		a.Host, a.Window.Seconds())
}

// laneWords names a lane as a site operator reads it.
func laneWords(lane string) string {
	switch lane {
	case "plain":
		return "the plain fetch (an HTTP GET without JavaScript)"
	case "render":
		return "the browser render (headless Chromium)"
	}
	return "a LektaBot fetch"
}

// Verifier answers claims from a Store.
type Verifier struct {
	store Store
	cfg   Config
}

// New returns a Verifier reading records from store.
func New(store Store, cfg Config) *Verifier {
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	return &Verifier{store: store, cfg: cfg}
}

// Window is the range of record times that can match c.
func (v *Verifier) Window(c Claim) (from, to time.Time) {
	return window(c, v.cfg.Window)
}

func window(c Claim, w time.Duration) (time.Time, time.Time) {
	return c.Time.Add(-w), c.Time.Add(c.Precision + w)
}

// Verify matches c against the records of its host around its time. An
// error is the store's; a claim without match is an Answer, not an error.
func (v *Verifier) Verify(ctx context.Context, c Claim) (Answer, error) {
	from, to := v.Window(c)
	recs, err := v.store.Candidates(ctx, c.Host, from, to)
	if err != nil {
		return Answer{}, fmt.Errorf("verify: %w", err)
	}
	return Match(c, recs, v.cfg), nil
}

// Match is the matcher itself: the record of c's host closest to c's time
// that agrees on method, path, query and source, within the window.
func Match(c Claim, recs []Record, cfg Config) Answer {
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	no := Answer{Host: c.Host, Window: cfg.Window}
	lanes, ok := lanesFor(c.UserAgent, cfg)
	if !ok {
		return no
	}
	from, to := window(c, cfg.Window)
	qh := QueryHash(c.Query)
	egress := slices.Contains(cfg.Egress, c.Client)
	best, found := Record{}, false
	for _, r := range recs {
		switch {
		case r.Host != c.Host, c.Port != 0 && r.Port != c.Port,
			r.At.Before(from), r.At.After(to),
			r.Method != c.Method, r.Path != c.Path, r.QueryHash != qh,
			!egress && r.Source.Unmap() != c.Client,
			lanes != nil && !slices.Contains(lanes, r.Lane):
			continue
		}
		if !found || distance(r.At, c) < distance(best.At, c) {
			best, found = r, true
		}
	}
	if !found {
		return no
	}
	return Answer{Match: true, At: best.At, Source: c.Client, Lane: best.Lane, Host: c.Host, Window: cfg.Window}
}

// distance is how far t is from the claim's time range.
func distance(t time.Time, c Claim) time.Duration {
	switch {
	case t.Before(c.Time):
		return c.Time.Sub(t)
	case t.After(c.Time.Add(c.Precision)):
		return t.Sub(c.Time.Add(c.Precision))
	}
	return 0
}

// lanesFor says which lanes a user agent can come from: nil for any (no
// agent given), none (ok false) when it does not name the bot.
func lanesFor(ua string, cfg Config) ([]string, bool) {
	if ua == "" || cfg.Token == "" {
		return nil, true
	}
	if !strings.Contains(ua, cfg.Token) {
		return nil, false
	}
	if cfg.PlainUA == "" {
		return nil, true
	}
	if ua == cfg.PlainUA {
		return []string{LaneRobots, LanePlain}, true
	}
	return []string{LaneRender}, true
}
