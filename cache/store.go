package cache

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrUnavailable: the store could not answer in time. Callers fail closed:
// no audit starts (CLI exit 3, API 503 with Retry-After).
var ErrUnavailable = errors.New("store unavailable")

// ErrRedisUnavailable wraps ErrUnavailable for a Redis that did not
// answer, so that a refusal can name it.
var ErrRedisUnavailable = fmt.Errorf("redis: %w", ErrUnavailable)

// ErrNotFound: no such report, or it has expired.
var ErrNotFound = errors.New("report not found")

// ErrTooLarge: the report exceeds Limits.MaxReportBytes after compression.
// Complete stored nothing and the lease is still held: call Complete again
// with a smaller (for example a failure) report.
var ErrTooLarge = errors.New("report too large")

// ErrLeaseLost: Complete was called with a lease that had expired (its holder
// ran past LeaseTTL). The report is stored under its id and joiners receive
// it, but the URL cache is not written and no newer lease is touched.
var ErrLeaseLost = errors.New("lease lost")

// ErrAbandoned: the audit Wait joined ended without a result, because its
// holder crashed and the lease expired. The caller may start over.
var ErrAbandoned = errors.New("joined audit abandoned")

// ErrNoProgress: the progress entry has no id or URL, or a status other
// than ProgressQueued or ProgressRunning.
var ErrNoProgress = errors.New("invalid progress")

// ProgressTTL is how long a progress entry lives after it was last set: a
// crashed instance's entries vanish after it, and a live one refreshes
// them at each step and heartbeat.
const ProgressTTL = 2 * time.Minute

// The statuses of a Progress entry.
const (
	ProgressQueued  = "queued"
	ProgressRunning = "running"
)

// ReasonConcurrency is Admission.Reason when the host already runs as many
// audits as Limits.Concurrency allows. A window's reason is its String form,
// such as "1/1m".
const ReasonConcurrency = "concurrency"

// ReasonReserved is Admission.Reason when a queued audit asks to start
// before the start its URL reserved: it waits for it, so that starts keep
// the slack Reserve planned between them.
const ReasonReserved = "reserved"

// Decision is the outcome of Admit.
type Decision int

// The outcomes of Admit.
const (
	// Admitted: the caller holds a lease on the host and must call Complete.
	Admitted Decision = iota + 1
	// Cached: a fresh result exists; Admission.Entry holds it.
	Cached
	// InFlight: the same URL is being audited; Wait for Admission.RunningID.
	InFlight
	// Refused: a limit says no; Admission.RetryAfter and Reason say why.
	Refused
	// Reserved: Reserve kept a start of the host for the caller at
	// Admission.StartsAt; the caller queues the audit for then and calls
	// Admit with the same id when it starts (or Unreserve).
	Reserved
)

// String names the decision for logs.
func (d Decision) String() string {
	switch d {
	case Admitted:
		return "admitted"
	case Cached:
		return "cached"
	case InFlight:
		return "in_flight"
	case Refused:
		return "refused"
	case Reserved:
		return "reserved"
	}
	return "unknown"
}

// Entry is a stored result.
type Entry struct {
	// ID is the report id of the audit that produced the result.
	ID string
	// Report is the encoded report, exactly as handed to Complete.
	Report []byte
	// CompletedAt is when Complete stored it, by the store's clock.
	CompletedAt time.Time
	// Age is how old the result was when this read happened, by the
	// store's clock; it is what a `cached: true` answer shows.
	Age time.Duration
	// Failed marks a failure report: joiners and Report receive it, the
	// URL cache never holds it.
	Failed bool
	// Referred is set when Report read the entry through a reference that
	// Refer made: ID is then the reference's own id and Age the age the
	// result had when it was answered from the cache.
	Referred bool
}

// Outcome is what an audit hands to Complete.
type Outcome struct {
	// Report is the encoded report; compressed when large, capped at
	// Limits.MaxReportBytes after compression.
	Report []byte
	// Failed marks a failure: the audit still counted against the windows,
	// the report is kept by id, the URL is not cached.
	Failed bool
	// Contacted is how long after its admission the audit last could have
	// made its first request reach the site (its answer arrived, or the
	// attempt failed). The store moves the audit's start that much later,
	// by its own clock, so that the windows count from what the site saw:
	// the next start keeps a whole window after it. Zero: at admission.
	Contacted time.Duration
}

// Lease is the right to run one audit of one URL on one host. Its ID is the
// report id given to Admit and is also the owner token: only Complete with
// this lease releases it, and only while it has not expired.
type Lease struct {
	// Host is the limiter key: the URL's hostname, lower case, no port.
	Host string
	// URL is the normalised URL as given to Admit.
	URL string
	// ID is the report id and owner token.
	ID string
}

// Admission is the answer of Admit.
type Admission struct {
	Decision Decision
	// Lease is set when Admitted.
	Lease Lease
	// Entry is set when Cached.
	Entry Entry
	// RunningID is set when InFlight: the report id of the running audit.
	RunningID string
	// RetryAfter is set when Refused: the longest wait among the violated
	// constraints, to the millisecond. For concurrency it is the time until
	// the earliest running audit is expected to end (Limits.Typical after
	// its start; a few seconds once it runs longer, never past its lease).
	// A refused Reserve says when a reservation within its bound would be
	// accepted.
	RetryAfter time.Duration
	// Reason is set when Refused: ReasonConcurrency or the window with the
	// longest wait, as Window.String gives it ("1/1m", "5/1h"). Ties go to
	// concurrency, then to the earlier window. A Reserved start later than
	// now carries the constraint that put it off, named alike (a start
	// shared with another id's reservation carries none).
	Reason string
	// StartsAt is set when Reserved: the time reserved for the audit's
	// start, by the store's clock. An Admit refusal of an audit that held
	// a reservation moves it to the new time, and StartsAt says so.
	StartsAt time.Time
}

// RetryAfterSeconds is RetryAfter in whole seconds, rounded up and at least
// 1, as the Retry-After header and the report's retry_after_s carry it.
func (a Admission) RetryAfterSeconds() int {
	s := int((a.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}

// Progress is where an audit stands while it is queued or running, kept in
// the shared store so that every instance can show it.
type Progress struct {
	// ID is the report id.
	ID string
	// URL is the normalised URL.
	URL string
	// Status is ProgressQueued or ProgressRunning.
	Status string
	// Step is the step running, such as "robots"; empty while queued.
	Step string
	// Position is the place in the queue when it was queued (1 is next);
	// 0 once running.
	Position int
	// StartsAt is when a queued audit is due to start; an entry lives
	// ProgressTTL past it.
	StartsAt time.Time
	// Keep, when longer than ProgressTTL, is how long the entry lives
	// instead: a queued audit whose job only its own instance can run
	// (River on that instance's SQLite) stays answerable while the
	// instance is stopped.
	Keep time.Duration
	// UpdatedAt is when it was last set, by the store's clock.
	UpdatedAt time.Time
}

// fresh reports whether a result completed at at (unix ms) may still answer
// at now under ttl: completed_at > now - ttl. Every store applies its own
// CacheTTL when it reads, whatever expiry the writer stored, so that no
// instance answers with a result older than its own --cache-ttl.
func fresh(at, now int64, ttl time.Duration) bool {
	return at > now-ttl.Milliseconds()
}

// Store is the shared state of audits. URLs must be normalised by the caller
// (policy); the store keys limits by their lower-case hostname without port
// and caches by the exact URL string.
type Store interface {
	// Lookup returns a fresh cached result for url, with its age. It never
	// charges the limiter. A failed audit is never cached. Fresh is by the
	// reading store's Limits.CacheTTL as well as the stored expiry: a
	// result written under a longer TTL is not answered once older than
	// the reader's (here, and in Admit and Reserve).
	Lookup(ctx context.Context, url string) (Entry, bool, error)
	// Admit decides atomically: Cached if a fresh result exists, InFlight if
	// the same URL is running, else Admitted (the start counts against every
	// window, even if the audit later fails) or Refused (which counts
	// against nothing). Calling it again with the same id while the lease is
	// held returns the same lease and counts nothing new. Admit consumes
	// the reservation of the URL, if any (a URL is queued once, under
	// whichever id); other URLs' live reservations count in the windows,
	// so that nobody takes a start a queued audit was promised. A refusal
	// of a reserved URL moves its reservation to the new time.
	Admit(ctx context.Context, url, id string) (Admission, error)
	// Reserve decides for an audit to be queued, charging nothing yet:
	// Cached, InFlight, Refused when the earliest start the windows (and
	// the running audits, by Limits.Typical) allow, counting every live
	// reservation of another URL, is more than within from now; else
	// Reserved, holding that start for the URL, reserved by id
	// (Admission.StartsAt), until ReserveGrace past it. A URL whose start
	// another id reserved already is answered that start and reserves
	// nothing more (the queue joins the two); reserving again with the
	// same id moves its reservation. It checks first that a report could
	// be kept.
	Reserve(ctx context.Context, url, id string, within time.Duration) (Admission, error)
	// Unreserve drops the reservation of url if id made it; dropping none
	// is no error.
	Unreserve(ctx context.Context, url, id string) error
	// Renew extends a held lease to LeaseTTL from now, never shortening it
	// (a lease lives at least LeaseMin from its admission): the holder's
	// heartbeat. ErrLeaseLost when the lease has expired or was released.
	Renew(ctx context.Context, l Lease) error
	// SetProgress stores p (UpdatedAt is set by the store) for ProgressTTL,
	// or until ProgressTTL after p.StartsAt when that is later.
	SetProgress(ctx context.Context, p Progress) error
	// Progress returns the live progress entry of id, if any.
	Progress(ctx context.Context, id string) (Progress, bool, error)
	// DropProgress deletes the progress entry of id; dropping none is no error.
	DropProgress(ctx context.Context, id string) error
	// Wait joins the running audit id of url and returns its entry when it
	// completes, a failure included (Entry.Failed). ErrAbandoned if it ended
	// without a result.
	Wait(ctx context.Context, url, id string) (Entry, error)
	// Complete stores the report under the lease's id, then in one atomic
	// step caches it for the URL (unless it failed), releases the lease and
	// wakes joiners. Repeating a successful Complete is a no-op. An expired
	// lease gets ErrLeaseLost; a report over the cap ErrTooLarge.
	Complete(ctx context.Context, l Lease, o Outcome) error
	// Report returns a stored report by id, or ErrNotFound. An id made by
	// Refer answers the result it refers to, with Entry.Referred set.
	Report(ctx context.Context, id string) (Entry, error)
	// Refer gives a cached answer a report id of its own: it stores id as a
	// reference to the result e (an Entry from Lookup or Admit), so that
	// Report(id) answers e's report without revealing e.ID, the id of the
	// audit that produced it. The reference is a few bytes, never a copy,
	// and expires with the report it points at. It counts against nothing.
	Refer(ctx context.Context, id string, e Entry) error
	// Ping checks that the store can answer (for readiness probes).
	Ping(ctx context.Context) error
	// Close releases the store's connections.
	Close() error
}
