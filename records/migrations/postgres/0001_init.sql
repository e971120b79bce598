-- Version 1 of the PostgreSQL schema. Times are unix milliseconds. Hot
-- state lives in Redis in deployments on PostgreSQL, so there are no hot_*
-- tables here.

-- Reports by id: the records role, kept for --report-ttl.
CREATE TABLE reports (
	id           TEXT PRIMARY KEY,
	completed_at BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL,
	failed       BOOLEAN NOT NULL,
	body         BYTEA NOT NULL
);
CREATE INDEX reports_expires_at ON reports (expires_at);
