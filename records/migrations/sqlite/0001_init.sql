-- Version 1 of the SQLite schema. Times are unix milliseconds.

-- Reports by id: the records role, kept for --report-ttl.
CREATE TABLE reports (
	id           TEXT PRIMARY KEY,
	completed_at INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	failed       INTEGER NOT NULL,
	body         BLOB NOT NULL
);
CREATE INDEX reports_expires_at ON reports (expires_at);

-- Hot state of audits, read and written by package cache's SQLiteStore
-- when there is no Redis. Every row expires; sweeps delete expired rows.

-- A concurrency lease: audit id runs one URL (url_hash) of host until
-- expires_at, unless it completes first.
CREATE TABLE hot_leases (
	host       TEXT NOT NULL,
	id         TEXT NOT NULL,
	url_hash   TEXT NOT NULL,
	url        TEXT NOT NULL,
	started_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (host, id)
) WITHOUT ROWID;
CREATE INDEX hot_leases_expires_at ON hot_leases (expires_at);

-- When each admitted audit of a host started, for the sliding windows; a
-- row expires when the longest window has passed it.
CREATE TABLE hot_starts (
	host TEXT NOT NULL,
	at   INTEGER NOT NULL,
	id   TEXT NOT NULL,
	PRIMARY KEY (host, at, id)
) WITHOUT ROWID;
CREATE INDEX hot_starts_at ON hot_starts (at);

-- The result cache: the last good report of a URL, for --cache-ttl.
CREATE TABLE hot_results (
	url_hash     TEXT PRIMARY KEY,
	host         TEXT NOT NULL,
	id           TEXT NOT NULL,
	completed_at INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	body         BLOB NOT NULL
);
CREATE INDEX hot_results_expires_at ON hot_results (expires_at);

-- A Complete that succeeded, so that repeating it is a no-op.
CREATE TABLE hot_fins (
	host       TEXT NOT NULL,
	id         TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (host, id)
) WITHOUT ROWID;
CREATE INDEX hot_fins_expires_at ON hot_fins (expires_at);
