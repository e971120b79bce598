package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/escape"
	"lekta.dev/lekta/policy"
)

// Schema names the report format; programs check it before reading.
const Schema = "lekta.report/v1"

// Status is the outcome of a whole audit.
type Status string

// Audit statuses.
const (
	// StatusComplete: both lanes fetched the page.
	StatusComplete Status = "complete"
	// StatusPartial: one lane finished, the other failed or timed out.
	StatusPartial Status = "partial"
	// StatusSkipped: the site was not fetched (robots.txt unreachable, or a
	// scheduled re-audit of a disallowed URL).
	StatusSkipped Status = "skipped"
	// StatusBlocked: the SSRF guard refused the page itself in both lanes.
	StatusBlocked Status = "blocked"
	// StatusRateLimited: the per-host limits refused the audit.
	StatusRateLimited Status = "rate_limited"
	// StatusTimeout: the hard deadline passed before any lane finished.
	StatusTimeout Status = "timeout"
	// StatusError: neither lane could fetch the page.
	StatusError Status = "error"
	// StatusCancelled: the audit was stopped by us, not by the site (the
	// service was shutting down); Reason says why. It says nothing about
	// the site: no findings, no robots section.
	StatusCancelled Status = "cancelled"
)

// Ran reports whether the audit reached the site and produced a comparison
// (complete or partial).
func (s Status) Ran() bool { return s == StatusComplete || s == StatusPartial }

// NotRun reports whether the audit did not happen: refused by the limits,
// skipped, cancelled, or blocked before any contact with the page. Its
// report has nothing to say about the page.
func (s Status) NotRun() bool {
	return s == StatusRateLimited || s == StatusSkipped || s == StatusCancelled || s == StatusBlocked
}

// statusWords says each status as people read it.
var statusWords = map[Status]string{
	StatusComplete: "complete", StatusPartial: "partial", StatusSkipped: "skipped", StatusBlocked: "blocked",
	StatusRateLimited: "rate limited", StatusTimeout: "timed out", StatusError: "failed", StatusCancelled: "cancelled",
}

// Words is the status in words ("rate limited"), for text and pages; the
// JSON keeps the value itself ("rate_limited").
func (s Status) Words() string {
	if w, ok := statusWords[s]; ok {
		return w
	}
	return strings.ReplaceAll(string(s), "_", " ")
}

// Trigger says who asked for an audit.
type Trigger string

// Triggers.
const (
	TriggerCLI       Trigger = "cli"
	TriggerForm      Trigger = "form"
	TriggerAPI       Trigger = "api"
	TriggerScheduled Trigger = "scheduled"
	// TriggerMember is a member's "run now" of a saved site: user-triggered
	// for robots.txt, like a form submission.
	TriggerMember Trigger = "member"
)

// ParseTrigger validates a trigger name.
func ParseTrigger(s string) (Trigger, error) {
	switch t := Trigger(s); t {
	case TriggerCLI, TriggerForm, TriggerAPI, TriggerScheduled, TriggerMember:
		return t, nil
	}
	return "", fmt.Errorf("unknown trigger %q (want cli, form, api or scheduled)", s)
}

// Outcome is how one lane ended.
type Outcome string

// Lane outcomes.
const (
	OutcomeOK      Outcome = "ok"
	OutcomeError   Outcome = "error"
	OutcomeTimeout Outcome = "timeout"
	OutcomeSkipped Outcome = "skipped"
	OutcomeBlocked Outcome = "blocked"
)

// Report is the result of one audit: what each lane saw, how they differ,
// and the findings. It holds derived data only, never the raw HTML.
type Report struct {
	Schema     string    `json:"schema"`
	ID         string    `json:"id"`
	URL        string    `json:"url"`
	Status     Status    `json:"status"`
	Trigger    Trigger   `json:"trigger"`
	StartedAt  Timestamp `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`
	// Reason explains a skipped, blocked, rate-limited, timed-out or failed audit.
	Reason string `json:"reason,omitempty"`
	// Cached is true when the report was answered from the result cache.
	Cached bool `json:"cached"`
	// CacheAgeS is the cached report's age in seconds.
	CacheAgeS int64 `json:"cache_age_s,omitempty"`
	// Joined is true when this request waited for the same URL's audit already running.
	Joined bool `json:"joined,omitempty"`
	// RetryAfterS is set on rate_limited reports.
	RetryAfterS int64 `json:"retry_after_s,omitempty"`
	// Limit names the limit a rate_limited audit hit: "concurrency" or a
	// window such as "1/1m".
	Limit string `json:"limit,omitempty"`
	// Agent is the product token the audit ran under.
	Agent string `json:"agent"`
	// Verdict is what a reader sees first: the worst finding in words, the
	// counts of critical and warning findings, and the shares when both
	// lanes produced a document. Every report has one.
	Verdict  *compare.Conclusion `json:"verdict,omitempty"`
	Findings []compare.Finding   `json:"findings"`
	Diff     []compare.FieldDiff `json:"diff"`
	Lanes    Lanes               `json:"lanes"`
	Robots   *RobotsSection      `json:"robots,omitempty"`
	// Crawlers says, per well-known crawler, what robots.txt and the robots
	// directives tell it and which view (lane) it gets; computed from what
	// LektaBot fetched, never by fetching as that crawler. Set when a lane ran.
	Crawlers []compare.CrawlerRow `json:"crawlers,omitempty"`
}

// Lanes holds the two lanes' reports.
type Lanes struct {
	Plain  LaneReport       `json:"plain"`
	Render RenderLaneReport `json:"render"`
}

// LaneReport is what one lane fetched.
type LaneReport struct {
	Outcome     Outcome            `json:"outcome"`
	HTTPStatus  int                `json:"http_status"`
	FinalURL    string             `json:"final_url"`
	UserAgent   string             `json:"user_agent"`
	Error       string             `json:"error,omitempty"`
	ContentType string             `json:"content_type,omitempty"`
	Bytes       int64              `json:"bytes"`
	Truncated   bool               `json:"truncated,omitempty"`
	Redirects   []compare.Redirect `json:"redirects"`
	Headers     compare.Header     `json:"headers"`
	TTFBMS      int64              `json:"ttfb_ms"`
	// DurationMS is the lane's wall time, also when it failed or timed out.
	DurationMS int64 `json:"duration_ms"`
	// CutByDeadline: the lane was still running when its share of the
	// deadline (or the audit's) ran out, so it was stopped.
	CutByDeadline bool `json:"cut_by_deadline,omitempty"`
	// Page is the extract; nil when the lane produced no HTML document.
	Page *compare.Page `json:"page"`
	// NotModified: the plain lane's conditional GET was answered 304, so
	// Page, ContentType and FinalURL are the previous re-audit's (plain
	// lane only).
	NotModified bool `json:"not_modified,omitempty"`
}

// RenderLaneReport adds what only the render lane knows.
type RenderLaneReport struct {
	LaneReport
	// BlockedRequests counts the requests the lane refused, by reason.
	BlockedRequests map[string]int           `json:"blocked_requests"`
	BlockedURLs     []compare.BlockedRequest `json:"blocked_urls"`
	ConsoleErrors   []string                 `json:"console_errors"`
	Exceptions      []string                 `json:"exceptions"`
	FailedRequests  []compare.FailedRequest  `json:"failed_requests"`
	Requests        int                      `json:"requests"`
	// SourceMaps counts the source maps the lane fetched to name the
	// site's own file behind a cause (included in Requests).
	SourceMaps int  `json:"source_maps,omitempty"`
	Settled    bool `json:"settled"`
	// SettledBy says why the render stopped waiting for the page: idle,
	// budget, deadline or request_budget (compare.RenderDetails.SettledBy).
	SettledBy string `json:"settled_by,omitempty"`
	// PageTimeMS is the page time (virtual, fast-forwarded) the page used;
	// DurationMS is the lane's wall time.
	PageTimeMS int64 `json:"page_time_ms"`
	// PendingRequests are requests still in flight when the render was cut.
	PendingRequests []string `json:"pending_requests,omitempty"`
	// CookiesRefused and CredentialsRefused count what the page tried to
	// store or send that the lane refused (compare.RenderDetails).
	CookiesRefused     int `json:"cookies_refused"`
	CredentialsRefused int `json:"credentials_refused"`
	// RefusedFeatures are the features Google's renderer lacks that the
	// page tried (compare.RenderDetails.RefusedFeatures).
	RefusedFeatures []string `json:"refused_features,omitempty"`
	// Timing is where the render's wall time went; nil when the lane
	// rendered nothing (skipped, blocked, failed).
	Timing *RenderTiming `json:"timing,omitempty"`
}

// RenderTiming is where the render lane's wall time went, in milliseconds
// (compare.RenderTiming). context, navigate, settle and snapshot follow
// one another; document_request and load are points of the navigation,
// counted from its start; page_time_ms is the page (virtual) time the page
// used, which passes without wall time when nothing is in flight.
type RenderTiming struct {
	ContextMS         int64 `json:"context_ms"`
	NavigateMS        int64 `json:"navigate_ms"`
	DocumentRequestMS int64 `json:"document_request_ms"`
	LoadMS            int64 `json:"load_ms"`
	SettleMS          int64 `json:"settle_ms"`
	SnapshotMS        int64 `json:"snapshot_ms"`
	PageTimeMS        int64 `json:"page_time_ms"`
}

// renderTiming converts the lane's timing to the report's.
func renderTiming(t compare.RenderTiming, pageTime time.Duration) *RenderTiming {
	return &RenderTiming{
		ContextMS: t.Context.Milliseconds(), NavigateMS: t.Navigate.Milliseconds(),
		DocumentRequestMS: t.DocumentRequest.Milliseconds(), LoadMS: t.Load.Milliseconds(),
		SettleMS: t.Settle.Milliseconds(), SnapshotMS: t.Snapshot.Milliseconds(),
		PageTimeMS: pageTime.Milliseconds(),
	}
}

// fillEmpty makes every list and map of the report non-nil, so its JSON
// has [] and {} where there is nothing, never null.
func (r *Report) fillEmpty() {
	if r.Findings == nil {
		r.Findings = []compare.Finding{}
	}
	if r.Diff == nil {
		r.Diff = []compare.FieldDiff{}
	}
	for _, lr := range []*LaneReport{&r.Lanes.Plain, &r.Lanes.Render.LaneReport} {
		if lr.Redirects == nil {
			lr.Redirects = []compare.Redirect{}
		}
		if lr.Headers == nil {
			lr.Headers = compare.Header{}
		}
	}
	rl := &r.Lanes.Render
	if rl.BlockedRequests == nil {
		rl.BlockedRequests = map[string]int{}
	}
	if rl.BlockedURLs == nil {
		rl.BlockedURLs = []compare.BlockedRequest{}
	}
	if rl.ConsoleErrors == nil {
		rl.ConsoleErrors = []string{}
	}
	if rl.Exceptions == nil {
		rl.Exceptions = []string{}
	}
	if rl.FailedRequests == nil {
		rl.FailedRequests = []compare.FailedRequest{}
	}
	if r.Robots != nil {
		if r.Robots.Sitemaps == nil {
			r.Robots.Sitemaps = []string{}
		}
		if r.Robots.Issues == nil {
			r.Robots.Issues = []policy.RobotsIssue{}
		}
	}
}

// Encode returns the report as indented JSON, every control and bidi
// character in its strings written as a \u escape (escape.JSON): what the
// store keeps and what `lekta audit --json` prints. Decode reads it back
// to the same values.
func (r *Report) Encode() ([]byte, error) {
	return escape.JSON(r, "  ")
}

// Decode reads a report encoded by Encode.
func Decode(b []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("decode report: schema %q, want %q", r.Schema, Schema)
	}
	r.fillEmpty()
	return &r, nil
}
