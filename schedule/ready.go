package schedule

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// readyAtStart keeps every job of the audits queue available from its
// insert, its start in scheduled_at, instead of River's scheduled state.
//
// River takes an available job only once its scheduled_at has come (its
// fetch asks for scheduled_at <= now), so an audit still starts no sooner
// than its reserved start, and the producers of every instance poll for it
// every FetchPollInterval. A scheduled job, by contrast, is made available
// only by the elected leader, every 5 s, and a killed leader leaves it
// waiting until another is elected (about 10 s more, River's intervals
// being fixed). Kept available, a due audit starts within a poll of its
// time whoever leads, and a host's audits start in the order of their
// reserved starts, since River fetches by priority, then scheduled_at.
//
// A long snooze (a limit's wait, an outage's put-off) is still River's
// scheduled state: that start was nobody's promise to the second.
type readyAtStart struct{ river.HookDefaults }

// InsertBegin makes a scheduled insert into the audits queue available.
func (readyAtStart) InsertBegin(_ context.Context, p *rivertype.JobInsertParams) error {
	if p.Queue == QueueAudits && p.State == rivertype.JobStateScheduled {
		p.State = rivertype.JobStateAvailable
	}
	return nil
}
