package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/records"
)

// MemberRun is how a member's run-now is queued: the start its URL
// reserved (the job's audit consumes the reservation, which the store
// keeps by URL, when it starts) and, when that is later than the request,
// why.
type MemberRun struct {
	// StartsAt is the reserved start; zero or past: at once.
	StartsAt time.Time
	// Reason says in words why it starts later (audit.WaitReason).
	Reason string
	// Fresh: the run a cached answer promised, which waits while the
	// cached result is fresh (ReauditArgs.Fresh).
	Fresh bool
}

// RunNow queues a member-triggered re-audit of the site, requested at at,
// to start at run.StartsAt, and returns the id its history entry will have.
func (s *Scheduler) RunNow(ctx context.Context, siteID string, at time.Time, run MemberRun) (string, error) {
	at = at.Truncate(time.Millisecond)
	opts := ReauditArgs{}.InsertOpts()
	opts.Priority = priorityMember
	if run.StartsAt.After(s.cfg.Now()) {
		opts.ScheduledAt = run.StartsAt // taken at its start (readyAtStart)
	}
	args := ReauditArgs{SiteID: siteID, DueMS: at.UnixMilli(), Trigger: string(audit.TriggerMember), Reason: run.Reason, Fresh: run.Fresh}
	if _, err := retryLost(ctx, s, func() (*rivertype.JobInsertResult, error) { return s.client.Insert(ctx, args, &opts) }); err != nil {
		return "", fmt.Errorf("queue re-audit of %s: %w", siteID, err)
	}
	return records.HistoryID(siteID, at), nil
}

// RecordCached records rep, a fresh result the cache answered a member's
// run-now with at at, as that run (trigger member, the site untouched),
// compared with the previous entry as any run is, and returns its entry.
// When the site's latest entry is already rep's result (a cached answer
// gets an id of its own each time), it is that entry: a cached answer
// repeated is not another run.
func (s *Scheduler) RecordCached(ctx context.Context, siteID string, at time.Time, rep *audit.Report) (records.Entry, error) {
	db := s.cfg.Records
	site, err := db.Site(ctx, siteID)
	if err != nil {
		return records.Entry{}, fmt.Errorf("record cached run of %s: %w", siteID, err)
	}
	at = at.Truncate(time.Millisecond)
	var prev *Summary
	if e, err := db.LatestEntry(ctx, site.ID); err == nil {
		prev = summaryOf(e)
		if sameResult(prev, rep) {
			// The last run is this very result: pressing again adds no row.
			return e, nil
		}
	} else if !errors.Is(err, records.ErrNotFound) {
		return records.Entry{}, fmt.Errorf("record cached run of %s: %w", siteID, err)
	}
	id := records.HistoryID(site.ID, at)
	if err := s.record(ctx, site, id, at, audit.TriggerMember, rep, prev); err != nil {
		return records.Entry{}, fmt.Errorf("record cached run of %s: %w", siteID, err)
	}
	e, err := db.EntryByReport(ctx, rep.ID)
	if err != nil {
		return records.Entry{}, fmt.Errorf("record cached run of %s: %w", siteID, err)
	}
	return e, nil
}

// Pending is a member's run-now still waiting in the queue.
type Pending struct {
	// StartsAt is when the queue will start it (moved when a limit put
	// it off again).
	StartsAt time.Time
	// Reason says why it waits, in words; empty when nothing delays it.
	Reason string
	// Running: an instance is running it now.
	Running bool
	// Scheduled marks a re-audit of the site's schedule rather than a
	// run-now; Due is its due time, and a StartsAt past it means a limit
	// or a fresh cached result snoozed it.
	Scheduled bool
	Due       time.Time
	// Fresh marks the fresh run a cached run-now answer queued
	// (MemberRun.Fresh); HistoryID is the id its entry will have.
	Fresh     bool
	HistoryID string
}

// PendingRuns lists the site's re-audits waiting in the queue, run-now
// requests and snoozed scheduled ones, the earliest start first.
func (s *Scheduler) PendingRuns(ctx context.Context, siteID string) ([]Pending, error) {
	res, err := retryLost(ctx, s, func() (*river.JobListResult, error) {
		return s.client.JobList(ctx, river.NewJobListParams().Kinds(ReauditArgs{}.Kind()).Queues(QueueAudits).
			States(waitingStates...).Where("args->>'site_id' = @site", river.NamedArgs{"site": siteID}).
			OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(20))
	})
	if err != nil {
		return nil, fmt.Errorf("list pending runs of %s: %w", siteID, err)
	}
	out := make([]Pending, 0, len(res.Jobs))
	for _, j := range res.Jobs {
		var a ReauditArgs
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil {
			return nil, fmt.Errorf("list pending runs of %s: %w", siteID, err)
		}
		p := Pending{StartsAt: j.ScheduledAt, Running: j.State == rivertype.JobStateRunning,
			Scheduled: a.Trigger != string(audit.TriggerMember), Due: time.UnixMilli(a.DueMS),
			Fresh: a.Fresh, HistoryID: records.HistoryID(siteID, time.UnixMilli(a.DueMS))}
		if p.StartsAt.After(s.cfg.Now()) {
			p.Reason = a.Reason
		}
		out = append(out, p)
	}
	return out, nil
}

// sameResult reports whether the entry summarised by prev recorded the
// result rep answers with: the audit that started at the same time, for a
// report with a start.
func sameResult(prev *Summary, rep *audit.Report) bool {
	return prev != nil && !rep.StartedAt.IsZero() && prev.StartedMS == rep.StartedAt.UnixMilli()
}
