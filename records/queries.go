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
	putReport: `INSERT INTO reports (id, completed_at, expires_at, failed, body) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET completed_at = excluded.completed_at, expires_at = excluded.expires_at,
		failed = excluded.failed, body = excluded.body`,
	getReport:     "SELECT completed_at, failed, body FROM reports WHERE id = $1 AND expires_at > $2",
	sweepReports:  "DELETE FROM reports WHERE id IN (SELECT id FROM reports WHERE expires_at <= $1 LIMIT 500)",
	queryRequests: "SELECT " + requestColumns + " FROM request_records WHERE host = $1 AND at >= $2 AND at <= $3 ORDER BY at, id LIMIT $4",
	sweepRequests: "DELETE FROM request_records WHERE id IN (SELECT id FROM request_records WHERE at <= $1 LIMIT 500)",
}
