package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/plainget"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

// ReauditArgs is one due re-audit of a saved site: unique by site and due
// time, so each due re-audit is one job whichever instance inserts it.
type ReauditArgs struct {
	SiteID  string `json:"site_id" river:"unique"`
	DueMS   int64  `json:"due_ms" river:"unique"`
	Trigger string `json:"trigger"`
	// Reason says in words why a member's run-now starts later than it
	// was asked for (the start its URL reserved; Admit keeps it by URL).
	Reason string `json:"reason,omitempty"`
	// Fresh marks a member's run-now that the result cache answered: the
	// fresh run it asked for, which waits while a cached result is fresh.
	Fresh bool `json:"fresh,omitempty"`
}

// Kind is River's name for the job.
func (ReauditArgs) Kind() string { return "lekta_reaudit" }

// InsertOpts puts re-audits in the audits queue after public audits,
// unique by site and due time.
func (ReauditArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAudits, Priority: priorityScheduled, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// planArgs is the leader's periodic job that inserts due re-audits.
type planArgs struct{}

func (planArgs) Kind() string { return "lekta_plan" }

func (planArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueOther, MaxAttempts: 1}
}

// planWorker inserts each saved site's next re-audit once it falls within
// two ticks (scheduled at its due time), and, on its first run in this
// process, the latest one due if it was missed while no instance ran.
type planWorker struct {
	river.WorkerDefaults[planArgs]
	s        *Scheduler
	caughtUp atomic.Bool
}

func (w *planWorker) Work(ctx context.Context, _ *river.Job[planArgs]) error {
	_, err := w.s.Plan(ctx, !w.caughtUp.Load())
	if err == nil {
		w.caughtUp.Store(true)
	}
	return err
}

// Plan inserts the due re-audits of every saved site (see planWorker) and
// returns how many it asked River for; duplicates are River's to drop.
func (s *Scheduler) Plan(ctx context.Context, catchUp bool) (int, error) {
	sites, err := s.cfg.Records.AllSites(ctx)
	if err != nil {
		return 0, fmt.Errorf("plan re-audits: %w", err)
	}
	now := s.cfg.Now()
	ahead := 2 * s.cfg.Tick
	var params []river.InsertManyParams
	for _, site := range sites {
		sp, err := ParseSpec(site.Schedule, 0)
		if err != nil {
			continue // saved before a rule changed: it is refused when edited
		}
		sp = sp.AtLeast(s.cfg.MinInterval)
		if catchUp {
			prev := sp.Prev(site.ID, now, s.cfg.Window)
			if !prev.Before(site.CreatedAt) && now.Sub(prev) < min(sp.Interval, 12*time.Hour) {
				params = append(params, reaudit(site.ID, prev))
			}
		}
		if next := sp.Next(site.ID, now, s.cfg.Window); next.Sub(now) <= ahead {
			params = append(params, reaudit(site.ID, next))
		}
	}
	total := len(params)
	for len(params) > 0 {
		n := min(len(params), 500)
		if _, err := s.client.InsertMany(ctx, params[:n]); err != nil {
			return 0, fmt.Errorf("plan re-audits: %w", err)
		}
		params = params[n:]
	}
	return total, nil
}

func reaudit(siteID string, due time.Time) river.InsertManyParams {
	opts := ReauditArgs{}.InsertOpts()
	opts.ScheduledAt = due
	return river.InsertManyParams{Args: ReauditArgs{SiteID: siteID, DueMS: due.UnixMilli(), Trigger: string(audit.TriggerScheduled)}, InsertOpts: &opts}
}

// reauditWorker runs one due re-audit and records it.
type reauditWorker struct {
	river.WorkerDefaults[ReauditArgs]
	s *Scheduler
}

// Timeout bounds the job: the audit's hard limit plus the time to store it.
func (w *reauditWorker) Timeout(*river.Job[ReauditArgs]) time.Duration { return w.s.cfg.JobTimeout }

func (w *reauditWorker) Work(ctx context.Context, job *river.Job[ReauditArgs]) error {
	if job.AttemptedAt != nil {
		ctx = context.WithValue(ctx, claimedKey{}, *job.AttemptedAt)
	}
	return w.s.work(ctx, job.JobRow, job.Args)
}

// claimedKey keys the time River claimed a re-audit job in its context.
type claimedKey struct{}

// ClaimedAt is when River claimed the re-audit job whose context ctx is
// (the job's attempted_at), for measuring what the scheduler adds before
// Runner.Run starts; false outside a re-audit job.
func ClaimedAt(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(claimedKey{}).(time.Time)
	return t, ok
}

// work runs the re-audit a of job row; an error is River's to retry,
// JobSnooze puts it off without counting an attempt (as an outage that
// refuses its start does). A re-audit whose instance stopped after it
// started is recorded as lost, not run again.
func (s *Scheduler) work(ctx context.Context, row *rivertype.JobRow, a ReauditArgs) error {
	d, ok, err := s.dueReaudit(ctx, a)
	if err != nil || !ok {
		return s.orPutOff(row, err)
	}
	if lostID, ok := startedBefore(row); ok {
		return s.orPutOff(row, s.recordLost(ctx, d, lostID))
	}
	// A re-audit is a fetch of its own: it never joins the URL's running
	// audit, which may be a dead instance's (put off, no attempt counted).
	req := audit.Request{URL: d.site.URL, Trigger: d.trigger, ID: audit.NewID(), Unkept: d.trigger == audit.TriggerScheduled, NoJoin: true}
	req.OnStart = s.markStarted(row, req.ID)
	var prev *Summary
	if e, err := s.cfg.Records.LatestEntry(ctx, d.site.ID); err == nil {
		prev = summaryOf(e)
		if d.trigger == audit.TriggerScheduled {
			s.conditional(ctx, d.site, e, &req)
		}
	} else if !errors.Is(err, records.ErrNotFound) {
		return s.orPutOff(row, err)
	}
	rep, err := s.runner.Run(ctx, req)
	if rep, err = s.ranReport(ctx, row, d.site, rep, err, d.trigger == audit.TriggerScheduled || a.Fresh); err != nil {
		return err
	}
	return s.record(ctx, d.site, d.entryID, d.due, d.trigger, rep, prev)
}

// dueRun is what a re-audit job runs: its site, due time, history entry
// and trigger.
type dueRun struct {
	site    records.Site
	due     time.Time
	entryID string
	trigger audit.Trigger
}

// dueReaudit reads what the re-audit a runs; false when it has nothing to
// run: its site was removed, its member revoked, or it is recorded already
// (a rescued job is not run twice).
func (s *Scheduler) dueReaudit(ctx context.Context, a ReauditArgs) (dueRun, bool, error) {
	db := s.cfg.Records
	site, err := db.Site(ctx, a.SiteID)
	if errors.Is(err, records.ErrNotFound) {
		return dueRun{}, false, nil
	}
	if err != nil {
		return dueRun{}, false, err
	}
	if m, err := db.Member(ctx, site.MemberID); err != nil || m.Revoked() {
		return dueRun{}, false, err
	}
	d := dueRun{site: site, due: time.UnixMilli(a.DueMS), trigger: audit.Trigger(a.Trigger)}
	d.entryID = records.HistoryID(site.ID, d.due)
	if done, err := db.HasEntry(ctx, d.entryID); err != nil || done {
		return dueRun{}, false, err
	}
	if d.trigger != audit.TriggerMember {
		d.trigger = audit.TriggerScheduled
	}
	return d, true, nil
}

// recordLost stores and records the answer of the re-audit d whose
// instance stopped while it ran under reportID: lost, in the words of
// its trigger, never run again.
func (s *Scheduler) recordLost(ctx context.Context, d dueRun, reportID string) error {
	req := audit.Request{URL: d.site.URL, Trigger: d.trigger, ID: reportID, Unkept: d.trigger == audit.TriggerScheduled}
	rep, err := s.runner.Lost(ctx, req)
	if err != nil {
		return err
	}
	return s.record(ctx, d.site, d.entryID, d.due, d.trigger, rep, nil)
}

// ranReport is what the run of the re-audit of site answered (rep, err)
// means for its job: the report to record, or the error (River retries)
// or snooze (no attempt counted) that puts the job off. waitStale: a
// cached answer is not a run; the job waits until the result is stale.
func (s *Scheduler) ranReport(ctx context.Context, row *rivertype.JobRow, site records.Site, rep *audit.Report, err error, waitStale bool) (*audit.Report, error) {
	var ny *audit.NotYet
	switch {
	case errors.As(err, &ny):
		// Not a run: put off until the limiter allows one.
		return nil, river.JobSnooze(max(ny.Until.Sub(s.cfg.Now()), time.Second))
	case err != nil && rep == nil:
		s.unmarkStarted(row) // it did not start: the retry may run it
	}
	switch {
	case ctx.Err() != nil && rep == nil:
		return nil, river.JobSnooze(0) // stopping: run it at the next start
	case err != nil && rep == nil:
		if !errors.Is(err, policy.ErrInvalidURL) && !errors.Is(err, policy.ErrTargetRefused) {
			// The store did not answer (put off, no attempt counted), or a
			// joined audit (of a dead instance) was abandoned: no run
			// happened, River retries.
			return nil, s.orPutOff(row, fmt.Errorf("re-audit %s: %w", site.ID, err))
		}
		return &audit.Report{ID: "", Status: audit.StatusError, Reason: err.Error()}, nil
	case rep.Status == audit.StatusCancelled:
		// The service was shutting down before or while it ran: not a
		// run; it runs again at the next start.
		return nil, river.JobSnooze(0)
	case rep.Joined:
		// Another job's audit of the same URL answered: this due time
		// runs on its own later, so each recorded re-audit is one fetch.
		return nil, river.JobSnooze(joinSnooze)
	case rep.Cached && waitStale:
		// The site was not contacted and nothing was stored: try again
		// once the result is no longer fresh.
		return nil, river.JobSnooze(s.untilStale(rep))
	}
	return rep, nil
}

// summaryOf is the stored summary of entry e, what the next run is
// compared with; nil when it has none.
func summaryOf(e records.Entry) *Summary {
	var p Summary
	if json.Unmarshal(e.Summary, &p) != nil || p.Status == "" {
		return nil
	}
	return &p
}

// untilStale is UntilStale by the scheduler's CacheTTL.
func (s *Scheduler) untilStale(rep *audit.Report) time.Duration {
	return UntilStale(s.cfg.CacheTTL, rep)
}

// UntilStale is how long a run answered by the cached result rep waits
// for a fresh one: until the result is no longer fresh by ttl (the store
// reads by the same TTL), and a second more. A store that still answered
// a result this old waits one whole TTL, never a busy loop.
func UntilStale(ttl time.Duration, rep *audit.Report) time.Duration {
	left := ttl - time.Duration(rep.CacheAgeS)*time.Second
	if left <= 0 {
		left = ttl
	}
	return left + time.Second
}

// record stores the history entry of rep and queues the webhook on a regression.
func (s *Scheduler) record(ctx context.Context, site records.Site, id string, due time.Time, trigger audit.Trigger, rep *audit.Report, prev *Summary) error {
	sum := Summarize(rep)
	ch := Compare(prev, sum)
	e := records.Entry{ID: id, SiteID: site.ID, DueAt: due, RanAt: s.cfg.Now(), Trigger: string(trigger), ReportID: rep.ID,
		Status: string(rep.Status), TextShare: sum.TextShare, LinkShare: sum.LinkShare, Regression: ch.Regression}
	if rep.Verdict != nil {
		e.Critical = rep.Verdict.Critical
	}
	if rep.Status == audit.StatusSkipped && rep.Robots != nil && !rep.Robots.Allowed {
		e.Rule = rep.Robots.Rule
	}
	e.ETag, e.LastModified = validators(&rep.Lanes.Plain)
	var err error
	if e.Changes, err = json.Marshal(ch); err != nil {
		return err
	}
	if e.Summary, err = json.Marshal(sum); err != nil {
		return err
	}
	added, err := s.cfg.Records.AddEntry(ctx, e)
	if err != nil || !added || !ch.Regression || site.WebhookURL == "" {
		return err
	}
	return s.queueWebhook(ctx, site, e, ch)
}

// conditional makes req a conditional re-fetch of the plain lane when the
// previous entry e kept validators and its report, whose plain extract a
// 304 answer reuses, is still stored; otherwise the fetch is unconditional.
func (s *Scheduler) conditional(ctx context.Context, site records.Site, e records.Entry, req *audit.Request) {
	rr, ok := s.runner.(ReportReader)
	if !ok || e.ReportID == "" || (e.ETag == "" && e.LastModified == "") {
		return
	}
	rep, err := rr.StoredReport(ctx, e.ReportID)
	if err != nil {
		if !errors.Is(err, audit.ErrNotFound) {
			s.cfg.Logger.Warn("previous report of a re-audit", "site", site.ID, "report", e.ReportID, "err", err)
		}
		return
	}
	pl := rep.Lanes.Plain
	if pl.Outcome != audit.OutcomeOK || pl.Page == nil || rep.URL != site.URL {
		return
	}
	req.Validators = plainget.Validators{ETag: e.ETag, LastModified: e.LastModified}
	req.Previous = &pl
}

// validators are the ETag and Last-Modified of a plain lane's response, for
// the next re-audit's conditional fetch; none when the lane did not finish.
func validators(pl *audit.LaneReport) (etag, lastModified string) {
	if pl.Outcome != audit.OutcomeOK {
		return "", ""
	}
	first := func(k string) string {
		if v := pl.Headers.Values(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	return first("Etag"), first("Last-Modified")
}
