package records

// queries are the statements that differ between the dialects.
type queries struct {
	migrationsExist  string
	createMigrations string
	recordMigration  string
	putReport        string
	getReport        string
	sweepReports     string
	queryRequests    string
	sweepRequests    string
}

var sqliteQueries = queries{
	migrationsExist:  "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
	createMigrations: "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
	recordMigration:  "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
	putReport: `INSERT INTO reports (id, completed_at, expires_at, failed, body) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET completed_at = excluded.completed_at, expires_at = excluded.expires_at,
		failed = excluded.failed, body = excluded.body`,
	getReport:     "SELECT completed_at, failed, body FROM reports WHERE id = ? AND expires_at > ?",
	sweepReports:  "DELETE FROM reports WHERE id IN (SELECT id FROM reports WHERE expires_at <= ? LIMIT 500)",
	queryRequests: "SELECT " + requestColumns + " FROM request_records WHERE host = ? AND at >= ? AND at <= ? ORDER BY at, id LIMIT ?",
	sweepRequests: "DELETE FROM request_records WHERE id IN (SELECT id FROM request_records WHERE at <= ? LIMIT 500)",
}

var postgresQueries = queries{
	// Not to_regclass: its answer can lag behind a table another session
	// just created (seen with pgx's cached statements).
	migrationsExist:  "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations')",
	createMigrations: "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
	recordMigration:  "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
	// reports is partitioned by completed_at (0008): a report stored again
	// under its id replaces the earlier row whatever its partition.
	// Its id is sent on reportsChannel for the waiters of every instance
	// (Follow).
	putReport: `WITH earlier AS (DELETE FROM reports WHERE id = $1 AND completed_at <> $2),
		put AS (INSERT INTO reports (id, completed_at, expires_at, failed, body) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id, completed_at) DO UPDATE SET expires_at = excluded.expires_at,
		failed = excluded.failed, body = excluded.body RETURNING id)
		SELECT pg_notify('` + reportsChannel + `', id) FROM put`,
	getReport:     "SELECT completed_at, failed, body FROM reports WHERE id = $1 AND expires_at > $2 ORDER BY completed_at DESC LIMIT 1",
	sweepReports:  "DELETE FROM reports WHERE (id, completed_at) IN (SELECT id, completed_at FROM reports WHERE expires_at <= $1 LIMIT 500)",
	queryRequests: "SELECT " + requestColumns + " FROM request_records WHERE host = $1 AND at >= $2 AND at <= $3 ORDER BY at, id LIMIT $4",
	// request_records is partitioned by hour (0008): the sweep drops whole
	// hours, and deletes row by row only what the DEFAULT partition caught.
	sweepRequests: "DELETE FROM request_records_default WHERE id IN (SELECT id FROM request_records_default WHERE at <= $1 LIMIT 500)",
}

// postgresQueriesBefore8 are the statements of a schema before 0008, whose
// reports and request_records are not partitioned: for MigrateTo (the
// store bench's baseline). A server refuses a schema that is not current.
var postgresQueriesBefore8 = func() queries {
	q := postgresQueries
	q.putReport = `INSERT INTO reports (id, completed_at, expires_at, failed, body) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET completed_at = excluded.completed_at, expires_at = excluded.expires_at,
		failed = excluded.failed, body = excluded.body`
	q.getReport = "SELECT completed_at, failed, body FROM reports WHERE id = $1 AND expires_at > $2"
	q.sweepReports = "DELETE FROM reports WHERE id IN (SELECT id FROM reports WHERE expires_at <= $1 LIMIT 500)"
	q.sweepRequests = "DELETE FROM request_records WHERE id IN (SELECT id FROM request_records WHERE at <= $1 LIMIT 500)"
	return q
}()
