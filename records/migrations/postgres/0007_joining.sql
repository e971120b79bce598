-- Joining (issue 35): one-time sign-in links, the API keys members make
-- for themselves, and the requests for links counted against their hourly
-- limits. Times are unix milliseconds; 0 means "not set".

-- A one-time sign-in link, stored as the SHA-256 (hex) of its token. A
-- link is used by setting used_at, once: only a row whose used_at is 0
-- and whose expires_at is still ahead is ever updated.
CREATE TABLE signin_links (
	token_hash TEXT PRIMARY KEY,
	member_id  TEXT NOT NULL REFERENCES members (id),
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	used_at    BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX signin_links_expires_at ON signin_links (expires_at);

-- An API key a member made on the member pages, stored only as its
-- SHA-256 (hex). members.key_hash keeps the key the operator gave.
CREATE TABLE api_keys (
	id         TEXT PRIMARY KEY,
	member_id  TEXT NOT NULL REFERENCES members (id),
	key_hash   TEXT NOT NULL UNIQUE,
	label      TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	revoked_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX api_keys_member ON api_keys (member_id, created_at);

-- One request for a sign-in link, per subject (the hash of an address, a
-- client), kept while it counts against a limit.
CREATE TABLE link_requests (
	id      TEXT PRIMARY KEY,
	subject TEXT NOT NULL,
	at      BIGINT NOT NULL
);
CREATE INDEX link_requests_subject_at ON link_requests (subject, at);
CREATE INDEX link_requests_at ON link_requests (at);

-- Asking for a link finds the member by address without regard to case.
CREATE INDEX members_email_lower ON members (lower(email));
