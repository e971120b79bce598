package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/plainget"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/render"
)

// What a lane's snapshot says once it ran: the page observed, the lane's
// report, and the audit's verdict, status and lane findings.

// observe extracts the page when the lane produced a document, reading the
// robots rules addressed to this bot's token and judging unavailable_after
// by clock (zero: the snapshot's own); a non-HTML one yields an empty
// page, and Diff says what arrived instead.
func (a *Auditor) observe(snap *compare.Snapshot, err error, clock time.Time) *compare.Observed {
	if err != nil || snap == nil {
		return nil
	}
	return &compare.Observed{Snapshot: snap, Page: compare.ExtractWith(snap, compare.Options{BotToken: a.cfg.Token, Now: clock})}
}

// fillLane copies a lane's snapshot and error into its report. took is
// the lane's wall time, kept when no snapshot says better, and a lane that
// ran out of time says so instead of a total of 0 ms.
func fillLane(ctx context.Context, lr *LaneReport, snap *compare.Snapshot, err error, took time.Duration) {
	lr.Outcome = OutcomeOK
	if err != nil {
		lr.Outcome, lr.Error = classify(ctx, err), err.Error()
	}
	lr.DurationMS = took.Milliseconds()
	lr.CutByDeadline = ctx.Err() != nil || lr.Outcome == OutcomeTimeout
	if snap == nil {
		return
	}
	lr.HTTPStatus, lr.FinalURL, lr.ContentType = snap.Status, snap.FinalURL, snap.ContentType
	lr.Bytes, lr.Truncated, lr.Headers = snap.Bytes, snap.Truncated, reported(snap.Header)
	lr.Redirects = snap.Redirects
	if lr.Redirects == nil {
		lr.Redirects = []compare.Redirect{}
	}
	lr.TTFBMS = snap.Timings.TTFB.Milliseconds()
	if snap.Timings.Total > 0 {
		lr.DurationMS = snap.Timings.Total.Milliseconds()
	}
	if snap.UserAgent != "" {
		lr.UserAgent = snap.UserAgent
	}
}

// reportedHeaders are the response headers a report shows: the ones that
// change how crawlers index or cache the page.
var reportedHeaders = []string{
	"Content-Type", "Content-Length", "Content-Encoding", "Content-Language",
	"X-Robots-Tag", "Link", "Last-Modified", "Etag", "Refresh", "Cache-Control", "Vary",
}

func reported(h compare.Header) compare.Header {
	out := compare.Header{}
	for _, k := range reportedHeaders {
		if v := h.Values(k); len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

// classify names a lane error's outcome.
func classify(ctx context.Context, err error) Outcome {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, render.ErrRenderTimeout), ctx.Err() != nil:
		return OutcomeTimeout
	case errors.Is(err, policy.ErrBlockedAddress), errors.Is(err, policy.ErrTargetRefused),
		errors.Is(err, plainget.ErrHopRefused), errors.Is(err, render.ErrURLRefused):
		return OutcomeBlocked
	}
	return OutcomeError
}

// finish diffs the lanes and sets the report's status and findings; it
// returns the comparison's verdict, nil when no lane produced a document.
func (a *Auditor) finish(r *Report, plain, rendered *compare.Observed) *compare.Verdict {
	if plain != nil && compare.IsHTML(plain.Snapshot.ContentType) {
		r.Lanes.Plain.Page = plain.Page
	}
	if rendered != nil && compare.IsHTML(rendered.Snapshot.ContentType) {
		r.Lanes.Render.Page = rendered.Page
	}
	r.Status, r.Reason = status(&r.Lanes.Plain, &r.Lanes.Render.LaneReport)
	var v *compare.Verdict
	if plain != nil || rendered != nil {
		res := compare.Diff(plain, rendered)
		r.Diff = res.Diff
		for _, f := range res.Findings {
			// A missing lane already has its lane.* finding with the cause.
			if f.Code != compare.CodePlainMissing && f.Code != compare.CodeRenderMissing {
				r.Findings = append(r.Findings, f)
			}
		}
		v = &res.Verdict
	}
	r.Findings = append(laneFindings(r), r.Findings...)
	return v
}

// status derives the audit status and its reason from the two lanes.
func status(plain, rendered *LaneReport) (Status, string) {
	po, ro := plain.Outcome, rendered.Outcome
	switch {
	case po == OutcomeOK && ro == OutcomeOK:
		return StatusComplete, ""
	case po == OutcomeOK:
		return StatusPartial, "the render lane did not finish: " + rendered.Error
	case ro == OutcomeOK:
		return StatusPartial, "the plain lane did not finish: " + plain.Error
	case po == OutcomeTimeout || ro == OutcomeTimeout:
		return StatusTimeout, "the hard deadline passed before any lane finished"
	case po == OutcomeBlocked && ro == OutcomeBlocked:
		return StatusBlocked, "both lanes were refused: " + plain.Error
	}
	return StatusError, "neither lane could fetch the page: " + plain.Error
}

// laneFindings reports lanes that did not finish.
func laneFindings(r *Report) []compare.Finding {
	out := []compare.Finding{}
	for _, l := range []struct {
		lane compare.Lane
		lr   *LaneReport
	}{{compare.LanePlain, &r.Lanes.Plain}, {compare.LaneRender, &r.Lanes.Render.LaneReport}} {
		if l.lr.Outcome == OutcomeOK {
			continue
		}
		msg := fmt.Sprintf("The %s lane did not finish (%s): %s.", l.lane, l.lr.Outcome, l.lr.Error)
		if l.lr.CutByDeadline {
			msg = fmt.Sprintf("The %s lane was stopped by the deadline after %s: %s.", l.lane, compare.Millis(l.lr.DurationMS), l.lr.Error)
		}
		f := finding("lane."+string(l.lr.Outcome), compare.SeverityWarning, "%s", msg) // compare.CodeLane*
		f.Lane = l.lane
		out = append(out, f)
	}
	return out
}
