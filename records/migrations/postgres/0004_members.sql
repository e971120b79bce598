-- Members, their saved sites, the re-audit history and browser sessions
-- (issue 12). Times are unix milliseconds; 0 means "not set".

-- A member: an API key, stored only as its SHA-256 (hex).
CREATE TABLE members (
	id         TEXT PRIMARY KEY,
	email      TEXT NOT NULL UNIQUE,
	key_hash   TEXT NOT NULL UNIQUE,
	created_at BIGINT NOT NULL,
	revoked_at BIGINT NOT NULL DEFAULT 0
);

-- A saved site: one URL re-audited on a schedule ("daily", "weekly" or an
-- interval such as "6h"). badge_token is unguessable and not the id.
CREATE TABLE sites (
	id             TEXT PRIMARY KEY,
	member_id      TEXT NOT NULL REFERENCES members (id),
	url            TEXT NOT NULL,
	schedule       TEXT NOT NULL,
	webhook_url    TEXT NOT NULL DEFAULT '',
	webhook_secret TEXT NOT NULL DEFAULT '',
	badge_token    TEXT NOT NULL UNIQUE,
	created_at     BIGINT NOT NULL,
	updated_at     BIGINT NOT NULL,
	-- The last webhook delivery: when, and how it ended, in words.
	webhook_at     BIGINT NOT NULL DEFAULT 0,
	webhook_result TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sites_member ON sites (member_id, created_at);

-- One re-audit of a site. The id derives from the site and the due time,
-- so a job that runs again after a rescue finds its entry and stops.
CREATE TABLE history (
	id            TEXT PRIMARY KEY,
	site_id       TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
	due_at        BIGINT NOT NULL,
	ran_at        BIGINT NOT NULL,
	trigger_name  TEXT NOT NULL,
	report_id     TEXT NOT NULL,
	status        TEXT NOT NULL,
	rule          TEXT NOT NULL DEFAULT '',
	text_share    DOUBLE PRECISION,
	link_share    DOUBLE PRECISION,
	critical      BIGINT NOT NULL DEFAULT 0,
	regression    BIGINT NOT NULL DEFAULT 0,
	-- JSON: the comparison with the previous entry, and this entry's
	-- summary (the fields compared next time). Derived values only.
	changes       TEXT NOT NULL DEFAULT '{}',
	summary       TEXT NOT NULL DEFAULT '{}',
	etag          TEXT NOT NULL DEFAULT '',
	last_modified TEXT NOT NULL DEFAULT ''
);
CREATE INDEX history_site_ran ON history (site_id, ran_at);
CREATE INDEX history_report ON history (report_id);

-- Run-now requests of a member, for the hourly allowance.
CREATE TABLE member_runs (
	member_id TEXT NOT NULL REFERENCES members (id),
	at        BIGINT NOT NULL
);
CREATE INDEX member_runs_at ON member_runs (member_id, at);

-- A browser session of the member pages, stored as the token's SHA-256.
CREATE TABLE sessions (
	token_hash TEXT PRIMARY KEY,
	member_id  TEXT NOT NULL REFERENCES members (id),
	csrf       TEXT NOT NULL,
	expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_expires_at ON sessions (expires_at);
