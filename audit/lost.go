package audit

import (
	"context"

	"lekta.dev/lekta/compare"
)

// Lost stores the report of a queued audit whose instance stopped (killed,
// crashed) while it ran: it is not run again, since that would contact the
// site a second time for one submission, and nothing more was fetched.
// Every instance then answers its id with this report.
func (a *Auditor) Lost(ctx context.Context, req Request) (*Report, error) {
	t, err := a.ticket(req)
	if err != nil {
		return nil, err
	}
	defer a.dropProgress(t.ID)
	r := a.cancelledReport(t, "", a.cfg.Now())
	r.Status = StatusError
	r.Reason = ReasonLost
	r.Verdict.Summary = "The audit did not finish: " + ReasonLost + "."
	r.Verdict.Severity = compare.SeverityNone
	if err := a.keepErr(t, r); err != nil {
		return r, err
	}
	return r, nil
}

// ReasonLost is the reason of an audit whose instance stopped while it ran.
const ReasonLost = "the instance running this audit stopped; nothing more was fetched — submit the URL again"
