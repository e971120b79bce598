package server

import (
	"errors"
	"net/http"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
)

// outageWords names, for people, the part that did not answer in err and
// why, as far as its error says: Redis, PostgreSQL or the SQLite file
// (a full disk, a lock), never a driver's own words.
func outageWords(err error) string {
	if errors.Is(err, cache.ErrRedisUnavailable) {
		return "Redis, which holds the audits' state, did not answer"
	}
	switch records.Engine(err) {
	case "PostgreSQL":
		return "PostgreSQL, which records audits, did not answer (" + records.Cause(err) + ")"
	case "SQLite":
		return "The SQLite database that records audits did not answer (" + records.Cause(err) + ")"
	}
	if errors.Is(err, records.ErrUnavailable) {
		return "The database that records audits did not answer (" + records.Cause(err) + ")"
	}
	return "The store that records audits did not answer"
}

// queueWords names the queue's database and why it did not answer.
func queueWords(err error) string {
	if e := records.Engine(err); e != "" {
		return "The queue that runs audits, in " + e + ", did not answer (" + records.Cause(err) + ")"
	}
	return "The queue that runs audits did not answer"
}

// readRefusal is the answer when an audit's state could not be read
// because a store did not answer: the audit is not lost, only unread for
// now. Any other error is err.
func readRefusal(err error) error {
	if !errors.Is(err, cache.ErrUnavailable) && !errors.Is(err, records.ErrUnavailable) && records.Engine(err) == "" {
		return err
	}
	return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable,
		Message: outageWords(err) + ", so this audit's state cannot be read now; it is not lost: ask again in " +
			compare.Duration(storeRetryAfter) + ".",
		RetryAfter: storeRetryAfter, outcome: outcomeUnavailable, cause: err}
}

// noteOverdue is the note of a queued audit that its instance has not
// started long after its start.
const noteOverdue = "queued on an instance that has not started it (it is stopped or busy); it runs when that instance can, and this id answers until then"

// overdue is the note of the progress entry p of a queued audit whose
// start passed more than cache.ProgressTTL ago: only an entry kept for an
// instance's own queue (audit.Config.QueuedKeep) lives that long.
func (s *Server) overdue(p cache.Progress) string {
	start := p.StartsAt
	if start.IsZero() {
		start = p.UpdatedAt
	}
	if p.Status != cache.ProgressQueued || s.cfg.Now().Sub(start) <= cache.ProgressTTL {
		return ""
	}
	return noteOverdue
}
