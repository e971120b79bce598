// Package cache holds the state audits share: the per-host limiter, the
// result cache, in-flight markers for joining an audit of the same URL, and
// stored reports. MemoryStore is the embedded default; RedisStore shares the
// state between processes. Both pass one contract suite.
package cache

import (
	"context"
	"errors"
	"time"
)

// ErrUnavailable: the store could not answer in time; callers fail closed.
var ErrUnavailable = errors.New("store unavailable")

// ErrNotFound: no such report.
var ErrNotFound = errors.New("not found")

// Decision is the outcome of Admit.
type Decision int

// The outcomes of Admit.
const (
	// Admitted: the caller holds the host's lease and must call Complete.
	Admitted Decision = iota + 1
	// Cached: a fresh result exists; Entry holds it.
	Cached
	// InFlight: the same URL is being audited; call Wait to join it.
	InFlight
	// Refused: a limit says no; RetryAfter and Reason say why.
	Refused
)

// Entry is a stored result: the encoded report and when it was completed.
type Entry struct {
	ID          string
	Report      []byte
	CompletedAt time.Time
	// Failed marks a result that joiners receive but the cache does not keep.
	Failed bool
}

// Lease is the right to run one audit of one URL on one host.
type Lease struct {
	Host  string
	URL   string
	ID    string
	Token string
}

// Admission is the answer of Admit.
type Admission struct {
	Decision Decision
	Lease    Lease  // Admitted
	Entry    Entry  // Cached
	ID       string // InFlight: the report id of the running audit
	// Refused:
	RetryAfter time.Duration
	Reason     string // "concurrency" or the violated window, e.g. "rate:1/1m"
}

// Store is the shared state of audits.
type Store interface {
	// Lookup returns a fresh cached result for url.
	Lookup(ctx context.Context, url string) (Entry, bool, error)
	// Admit decides atomically for an audit of url on host, to be stored under id.
	Admit(ctx context.Context, host, url, id string) (Admission, error)
	// Wait blocks until the in-flight audit of url completes and returns its entry.
	Wait(ctx context.Context, url string) (Entry, error)
	// Complete stores the result (cached unless e.Failed) and releases the lease in one step.
	Complete(ctx context.Context, l Lease, e Entry) error
	// Report returns a stored report by id.
	Report(ctx context.Context, id string) (Entry, error)
	Close() error
}
