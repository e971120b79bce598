package audit

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// RobotsSection is report.robots: what robots.txt said about the page.
type RobotsSection = policy.RobotsReport

// robotsBook reads each origin's robots.txt at most once per audit and
// answers for every request the audit makes to that origin: the page, each
// redirect hop of the plain lane, and the render lane's same-origin requests.
type robotsBook struct {
	a     *Auditor
	tr    http.RoundTripper
	mu    sync.Mutex
	reads map[string]*robotsRead
}

// robotsRead is one origin's robots.txt, read once.
type robotsRead struct {
	once sync.Once
	res  policy.RobotsResult
}

func newRobotsBook(a *Auditor, tr http.RoundTripper) *robotsBook {
	return &robotsBook{a: a, tr: tr, reads: map[string]*robotsRead{}}
}

// result returns the robots.txt of u's origin, reading it on first use.
func (b *robotsBook) result(ctx context.Context, u *url.URL) policy.RobotsResult {
	origin := u.Scheme + "://" + u.Host
	b.mu.Lock()
	rd, ok := b.reads[origin]
	if !ok {
		rd = &robotsRead{}
		b.reads[origin] = rd
	}
	b.mu.Unlock()
	rd.once.Do(func() {
		rd.res = policy.FetchRobots(ctx, policy.RobotsFetchConfig{
			Transport: b.tr,
			CheckURL:  b.a.cfg.Guard.CheckURL,
			Logger:    b.a.cfg.Logger,
		}, u, b.a.cfg.PlainUA)
	})
	return rd.res
}

// decide says whether LektaBot may fetch u; an unreachable robots.txt
// disallows with an error wrapping policy.ErrRobotsUnreachable.
func (b *robotsBook) decide(ctx context.Context, u *url.URL) (policy.Decision, error) {
	return b.result(ctx, u).DecideURL(b.a.cfg.Token, u)
}

// check is decide as an error: nil when u may be fetched, else one wrapping
// policy.ErrDisallowed or policy.ErrRobotsUnreachable.
func (b *robotsBook) check(ctx context.Context, u *url.URL) error {
	d, err := b.decide(ctx, u)
	if err != nil {
		return fmt.Errorf("robots.txt of %s: %w", u.Host, err)
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("robots.txt of %s: %w", u.Host, err)
	}
	return nil
}

// finding builds a pipeline finding.
func finding(code string, sev compare.Severity, format string, args ...any) compare.Finding {
	return compare.Finding{Code: code, Severity: sev, Message: fmt.Sprintf(format, args...)}
}
