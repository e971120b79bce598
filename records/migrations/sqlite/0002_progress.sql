-- Where each queued or running audit stands (status, step, queue position),
-- so that every process sharing the file can show it; a row lives until
-- expires_at unless the audit ends first. (Issue 11; numbered 0003 where
-- 0002 is taken.)
CREATE TABLE hot_progress (
	id         TEXT PRIMARY KEY,
	url        TEXT NOT NULL,
	status     TEXT NOT NULL,
	step       TEXT NOT NULL,
	position   INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX hot_progress_expires_at ON hot_progress (expires_at);
