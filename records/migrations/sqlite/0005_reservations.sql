-- Starts that queued audits hold for later (issue 20): a submission that
-- the durable queue runs at a later time reserves that start in its host's
-- windows, so that a 202 means the audit will run when it says. One row per
-- URL (a URL is queued once), with the id that reserved it; a row lives
-- until ReserveGrace past its time, and the URL's admission consumes it.
CREATE TABLE hot_reservations (
	host     TEXT NOT NULL,
	url_hash TEXT NOT NULL,
	id       TEXT NOT NULL,
	at       INTEGER NOT NULL,
	PRIMARY KEY (host, url_hash)
) WITHOUT ROWID;
CREATE INDEX hot_reservations_at ON hot_reservations (at);
-- When a queued audit is due to start, shown by every instance.
ALTER TABLE hot_progress ADD COLUMN starts_at INTEGER NOT NULL DEFAULT 0;
