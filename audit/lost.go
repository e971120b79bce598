package audit

import (
	"context"

	"lekta.dev/lekta/compare"
)

// Lost stores the report of a queued audit whose instance stopped (killed,
// crashed) while it ran: it is not run again, since that would contact the
// site a second time for one submission, and nothing more was fetched.
// Every instance then answers its id with this report. Its reason says
// what happens next in the words of whoever asked for it (LostReason).
func (a *Auditor) Lost(ctx context.Context, req Request) (*Report, error) {
	t, err := a.ticket(req)
	if err != nil {
		return nil, err
	}
	defer a.dropProgress(t.ID)
	r := a.cancelledReport(t, "", a.cfg.Now())
	r.Status = StatusError
	r.Reason = LostReason(req.Trigger)
	r.Verdict.Summary = "The audit did not finish: " + r.Reason + "."
	r.Verdict.Severity = compare.SeverityNone
	if err := a.keepErr(t, r); err != nil {
		return r, err
	}
	return r, nil
}

// Reasons of an audit whose instance stopped while it ran, by who asked
// for it: a submission, a saved site's schedule, a member's run-now.
const (
	ReasonLost          = "the instance running this audit stopped; nothing more was fetched — submit the URL again"
	ReasonLostScheduled = "the instance running this scheduled re-audit stopped; nothing more was fetched — the next one runs at its due time"
	ReasonLostMember    = "the instance running this run-now stopped; nothing more was fetched — press Run now to run it again"
)

// LostReason is the reason a lost audit of trigger gives.
func LostReason(trigger Trigger) string {
	switch trigger {
	case TriggerScheduled:
		return ReasonLostScheduled
	case TriggerMember:
		return ReasonLostMember
	}
	return ReasonLost
}

// IsLost reports whether rep is the report of a lost audit.
func IsLost(rep *Report) bool {
	return rep.Status == StatusError && (rep.Reason == ReasonLost || rep.Reason == ReasonLostScheduled || rep.Reason == ReasonLostMember)
}
