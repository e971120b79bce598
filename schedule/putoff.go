package schedule

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/render"
)

// DefaultOutageWait is the longest a job waits between two starts refused
// by an outage (Config.OutageWait).
const DefaultOutageWait = time.Minute

// outage reports whether err refused a job's start for a reason that is
// not the job's: the result cache or the records database did not answer,
// the queue's connection was lost, or the browser was gone. Such a start
// is put off, never counted as one of River's attempts, so an outage of
// any length discards no accepted audit.
func outage(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "23") || strings.HasPrefix(pe.Code, "42")) {
		return false // a statement PostgreSQL refuses (data, constraint, schema): not an outage, it stays refused
	}
	return errors.Is(err, cache.ErrUnavailable) || errors.Is(err, records.ErrUnavailable) ||
		errors.Is(err, render.ErrBrowserCrashed) || errors.Is(err, render.ErrClosed) || connLost(err)
}

// orPutOff is err for the job, unless err is an outage: then the job is
// snoozed (River keeps its attempt number) for outageWait.
func (s *Scheduler) orPutOff(job *rivertype.JobRow, err error) error {
	if err == nil || !outage(err) {
		return err
	}
	wait := outageWait(snoozes(job), s.cfg.OutageWait)
	s.cfg.Logger.Warn("audit start put off: outage", "job", job.ID, "kind", job.Kind, "wait", wait.String(), "err", err)
	return river.JobSnooze(wait)
}

// outageWait is the wait after n snoozes of a job: a second, doubling,
// at most ceiling.
func outageWait(n int, ceiling time.Duration) time.Duration {
	if n > 16 {
		return ceiling
	}
	return min(time.Second<<n, ceiling)
}

// snoozes is how often River snoozed the job (its metadata's count).
func snoozes(job *rivertype.JobRow) int {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(job.Metadata, &m) // none yet reads as 0
	return m.Snoozes
}
