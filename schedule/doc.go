// Package schedule runs members' re-audits as River jobs: the elected
// leader's periodic job inserts each due re-audit of a saved site as a
// unique job (site + due time); workers in every `lekta serve` run it
// through a Runner (the server, on its renderers and per-host limits),
// record it in the site's history with the changes since the previous
// one, and post a signed webhook on a regression.
//
// River is the scheduler, not code of ours: its PostgreSQL driver (pgx v5)
// when records are in PostgreSQL, its SQLite driver on river.db in the
// data dir (one open connection, as River's notes on SQLite advise)
// otherwise. River gives unique jobs, periodic jobs, snoozing, rescue of
// jobs whose worker died, and leader election.
//
// The politeness rules: a scheduled re-audit obeys robots.txt fully (a
// disallowed page is recorded as skipped with the rule, nothing fetched
// beyond robots.txt); a refusal by the per-host limiter snoozes the job
// until retry_after (not a run, the site not contacted); an answer from
// the result cache snoozes it until the cached result expires; daily and
// weekly runs fall at a stable per-site moment inside the night window.
package schedule
