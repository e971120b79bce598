package audit

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// siteFailure is why the site itself could not be reached.
type siteFailure struct {
	code   string
	reason string
	addr   string
}

// unreachableSite says whether reading robots.txt failed because the site
// cannot be reached at all (its name does not resolve, the connection is
// refused or times out, TLS fails), as opposed to robots.txt answering
// badly or too slowly. Nothing was fetched then, so no robots.txt decision
// was made. A refusal by the SSRF guard is not such a failure.
func unreachableSite(res policy.RobotsResult, target *url.URL) (siteFailure, bool) {
	if res.Outcome != policy.RobotsUnreachable || res.Err == nil || res.HTTPStatus != 0 ||
		errors.Is(res.Err, policy.ErrBlockedAddress) {
		return siteFailure{}, false
	}
	var de *policy.DialError
	if errors.As(res.Err, &de) {
		f := siteFailure{reason: de.Reason, addr: de.Addr}
		switch de.Reason {
		case policy.ReasonNoSuchHost, policy.ReasonDNSTimeout, policy.ReasonDNSFailed:
			f.code = compare.CodeSiteDNS
		case policy.ReasonRefused:
			f.code = compare.CodeSiteRefused
		case policy.ReasonConnectTimeout:
			f.code = compare.CodeSiteTimeout
		default:
			f.code = compare.CodeSiteNetwork
		}
		return f, true
	}
	if reason, ok := tlsReason(res.Err); ok {
		return siteFailure{code: compare.CodeSiteTLS, reason: reason, addr: hostPort(target)}, true
	}
	return siteFailure{}, false
}

// tlsReason says in words why a TLS handshake failed.
func tlsReason(err error) (string, bool) {
	var (
		hostErr    x509.HostnameError
		unknown    x509.UnknownAuthorityError
		invalid    x509.CertificateInvalidError
		verify     *tls.CertificateVerificationError
		record     tls.RecordHeaderError
		alert      tls.AlertError
		hostErrPtr *x509.HostnameError
	)
	switch {
	case errors.As(err, &hostErr), errors.As(err, &hostErrPtr):
		return "the certificate is for another host name", true
	case errors.As(err, &unknown):
		return "the certificate is not signed by an authority browsers trust (self-signed or an unknown issuer)", true
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "the certificate has expired or is not valid yet", true
	case errors.As(err, &invalid), errors.As(err, &verify):
		return "the certificate could not be verified", true
	case errors.As(err, &record):
		return "the server does not speak TLS on this port", true
	case errors.As(err, &alert):
		return "the server broke off the TLS handshake", true
	}
	// Handshake failures without a typed error ("tls: ..." from the
	// handshake itself) are still TLS failures.
	if strings.Contains(err.Error(), "tls: ") {
		return "the TLS handshake failed", true
	}
	return "", false
}

// hostPort is u's host with its port, the default one written out.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return u.Host + ":443"
	}
	return u.Host + ":80"
}

// siteUnreachable fills the report of an audit whose site cannot be
// reached: status error, a site.* finding in plain words, no robots.txt
// section (none was read, so nothing was decided), lanes not attempted.
func siteUnreachable(r *Report, f siteFailure) {
	r.Status = StatusError
	r.Reason = "the site cannot be reached: " + f.reason
	r.Robots = nil
	r.Findings = append(r.Findings, finding(f.code, compare.SeverityCritical,
		"The site cannot be reached: %s (%s). Nothing was fetched, robots.txt included, so there is no robots.txt decision and nothing to compare.",
		f.reason, f.addr))
	for _, lr := range []*LaneReport{&r.Lanes.Plain, &r.Lanes.Render.LaneReport} {
		lr.Outcome, lr.Error = OutcomeSkipped, "not attempted: the site cannot be reached"
	}
}

// disallowMessage is the robots.disallowed finding's text: the rule, the
// well-known crawlers the same file keeps out, and what the audit did.
func disallowMessage(token string, d policy.Decision, res policy.RobotsResult, target *url.URL, ran bool) string {
	var others []string
	for _, c := range compare.Crawlers() {
		if cd, err := res.DecideURL(c.Token, target); err == nil && !cd.Allowed {
			others = append(others, c.Token)
		}
	}
	msg := fmt.Sprintf("robots.txt disallows this page for %s: line %d, “%s”, in the group “%s”", token, d.Line, d.Rule, d.Group)
	switch n := len(others); {
	case n == 0:
		msg += "; the well-known crawlers it names are not kept out."
	case n == len(compare.Crawlers()):
		msg += "; it keeps every well-known crawler out too."
	default:
		msg += "; it also keeps out " + tokenList(others) + "."
	}
	if ran {
		return msg + " The audit ran once because a person asked for it, with the page's own scripts and styles; scheduled re-audits skip the URL."
	}
	return msg + " Scheduled re-audits skip it, so nothing was fetched."
}

// tokenList lists crawler tokens as "A, B and 5 more".
func tokenList(tokens []string) string {
	switch n := len(tokens); {
	case n == 1:
		return tokens[0]
	case n <= 3:
		return strings.Join(tokens[:n-1], ", ") + " and " + tokens[n-1]
	default:
		return fmt.Sprintf("%s, %s and %d more", tokens[0], tokens[1], n-2)
	}
}

// targetBlocked reports an audit whose own host the guard refused when
// robots.txt was fetched (its name resolves to an internal address): the
// page is blocked in both lanes for the guard's reason, as a refused page
// is, and no robots.txt decision was made.
func targetBlocked(r *Report, err error) {
	reason := err.Error()
	if i := strings.Index(reason, policy.ErrBlockedAddress.Error()); i >= 0 {
		reason = reason[i:] // the guard's words, without "fetch robots.txt: ..."
	}
	r.Status = StatusBlocked
	r.Reason = "both lanes were refused: " + reason
	r.Robots = nil
	for _, lr := range []*LaneReport{&r.Lanes.Plain, &r.Lanes.Render.LaneReport} {
		lr.Outcome, lr.Error = OutcomeBlocked, reason
	}
	r.Findings = append(r.Findings, laneFindings(r)...)
}
