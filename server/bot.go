package server

import (
	"fmt"
	"strings"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/render"
)

// Policy is the configuration in force that the /bot page describes. Every
// sentence of the page is generated from it, so a changed flag changes the page.
type Policy struct {
	Identity policy.Identity
	// RenderUA is the render lane's user agent, asked of the browser on
	// every request (it is known only once the browser runs).
	RenderUA func() string
	// Limits are the per-host limits and retention times of the store.
	Limits cache.Limits
	// Scope says who shares the per-host limits and the cache.
	Scope Scope
	// ReportsDurable is true when reports are kept in a database (SQLite
	// or PostgreSQL), which deletes them after Limits.ReportTTL; false when
	// they live in one process's memory (tests) and end with it.
	ReportsDurable bool
	// Timeout is the hard deadline of one audit.
	Timeout time.Duration
	// MaxRedirects is the most redirect hops a lane follows, per request chain.
	MaxRedirects int
	// MaxNavigations caps the page's own navigations after the first, and
	// MaxFrameLoads the documents loaded into its frames, per render.
	MaxNavigations, MaxFrameLoads int
	// ClientRate is the per-client submission limit.
	ClientRate []cache.Window
	// Contact is where operators reach the people running this instance.
	Contact string
	// PrivateAllowed is true when the operator let the guard dial some
	// private or loopback addresses (--allow-addr, for local testing).
	PrivateAllowed bool
	// NoSourceMaps is true when the render never fetches the source maps
	// of a page's scripts (--no-source-maps).
	NoSourceMaps bool
	// RequestRecordsTTL is how long a record of each request sent to a
	// site is kept for verification; 0 when records are off.
	RequestRecordsTTL time.Duration
	// PublicAddrUnknown is true when this instance does not know the public
	// address its requests leave from (its own is private and no
	// --egress-addr was given), so verification cannot match on source.
	PublicAddrUnknown bool
	// Typical are the configured bounds of a typical audit's duration,
	// shown until this instance has measured enough audits of its own
	// (default DefaultTypical).
	Typical [2]time.Duration
	// Reaudits describes members' scheduled re-audits; nil when this
	// instance runs none.
	Reaudits *ReauditPolicy
}

// Scope is who shares the per-host limits and the result cache.
type Scope int

// The scopes of Policy.Scope.
const (
	// ScopeProcess: one process's memory (tests only).
	ScopeProcess Scope = iota
	// ScopeMachine: the SQLite file that this service and every lekta
	// command on its machine share.
	ScopeMachine
	// ScopeInstances: Redis, shared by every instance of the service.
	ScopeInstances
)

// botView is what bot.html renders.
type botView struct {
	Token, Version, InfoURL string
	PlainUA, RenderUA       string
	Windows                 []string
	Concurrency             int
	Scope                   string
	CacheTTL, ReportTTL     string
	ReportsDurable          bool
	Timeout                 string
	// HoldBound is how long after its start a stopped instance's audit
	// can hold its host: the hard limit plus a margin.
	HoldBound         string
	MaxRedirects      int
	MaxNavigations    int
	MaxFrameLoads     int
	ClientRate        []string
	Contact           string
	ContactText       string
	ContactIsURL      bool
	PrivateAllowed    bool
	SourceMaps        bool
	MaxSourceMaps     int
	RobotsExample     string
	RecordsOn         bool
	RecordsTTL        string
	PublicAddrUnknown bool
	Reaudits          *ReauditPolicy
	ReauditMin        string
}

// ReauditPolicy is what /bot says of scheduled re-audits.
type ReauditPolicy struct {
	// Window is the night window of daily and weekly re-audits ("01:00-05:00")
	// and Zone its time zone.
	Window, Zone string
	// MinInterval is the shortest time between two re-audits of a site.
	MinInterval time.Duration
}

func (p Policy) view() botView {
	id := p.Identity
	if id.Token == "" {
		id = policy.DefaultIdentity()
	}
	v := botView{
		Token: id.Token, Version: id.Version, InfoURL: id.InfoURL, PlainUA: id.PlainUA(),
		Concurrency: p.Limits.Concurrency, CacheTTL: compare.Span(p.Limits.CacheTTL),
		ReportTTL: compare.Span(p.Limits.ReportTTL), Timeout: compare.Span(p.Timeout),
		HoldBound:    compare.Span(max(p.Limits.LeaseTTL, p.Limits.LeaseMin)),
		MaxRedirects: p.MaxRedirects, MaxNavigations: p.MaxNavigations, MaxFrameLoads: p.MaxFrameLoads,
		Contact: p.Contact, PrivateAllowed: p.PrivateAllowed,
		SourceMaps: !p.NoSourceMaps, MaxSourceMaps: render.MaxSourceMaps,
		ReportsDurable: p.ReportsDurable,
		RecordsOn:      p.RequestRecordsTTL > 0, RecordsTTL: compare.Span(p.RequestRecordsTTL),
		PublicAddrUnknown: p.PublicAddrUnknown,
		ContactText:       strings.TrimPrefix(p.Contact, "mailto:"),
		RobotsExample:     "User-agent: " + id.Token + "\nDisallow: /\n",
		Reaudits:          p.Reaudits,
	}
	if p.Reaudits != nil {
		v.ReauditMin = compare.Span(p.Reaudits.MinInterval)
	}
	switch p.Scope {
	case ScopeInstances:
		v.Scope = "across all users and all instances of this service (they share one store)"
	case ScopeMachine:
		v.Scope = "across all users of this service and of the lekta command line on its machine (they share one database)"
	default:
		v.Scope = "across all users of this instance (it keeps its limits in its own memory)"
	}
	v.ContactIsURL = strings.HasPrefix(p.Contact, "https://") || strings.HasPrefix(p.Contact, "http://") ||
		strings.HasPrefix(p.Contact, "mailto:")
	if p.RenderUA != nil {
		v.RenderUA = p.RenderUA()
	}
	if v.RenderUA == "" {
		v.RenderUA = "(the browser's own user agent)" + id.RenderSuffix()
	}
	for _, w := range p.Limits.Windows {
		v.Windows = append(v.Windows, windowText(w, "started"))
	}
	for _, w := range p.ClientRate {
		v.ClientRate = append(v.ClientRate, windowText(w, "submitted"))
	}
	return v
}

// windowText says "at most 5 started per 1 hour".
func windowText(w cache.Window, verb string) string {
	return fmt.Sprintf("at most %d %s per %s", w.N, verb, compare.Span(w.Per))
}
