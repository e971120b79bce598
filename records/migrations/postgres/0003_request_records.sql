-- Version 2 of the PostgreSQL schema: request records, one row per request
-- LektaBot sent to a site (robots.txt, plain-lane hops, render-lane requests
-- that left through the proxy), kept for --request-records-ttl so that a
-- site operator can verify a log line. Derived values only: no bodies, no
-- cookies, the query string only as a hash. Times are unix milliseconds.
CREATE TABLE request_records (
	id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at          BIGINT NOT NULL,
	lane        TEXT NOT NULL,
	method      TEXT NOT NULL,
	scheme      TEXT NOT NULL,
	host        TEXT NOT NULL,
	port        INTEGER NOT NULL,
	path        TEXT NOT NULL,
	query_hash  TEXT NOT NULL,
	remote_addr TEXT NOT NULL,
	remote_port INTEGER NOT NULL,
	local_addr  TEXT NOT NULL,
	local_port  INTEGER NOT NULL,
	status      INTEGER NOT NULL,
	error_class TEXT NOT NULL,
	bytes       BIGINT NOT NULL,
	audit_id    TEXT NOT NULL
);
-- Verification and `lekta records --host` read one host's window.
CREATE INDEX request_records_host_at ON request_records (host, at);
-- The sweep deletes by age.
CREATE INDEX request_records_at ON request_records (at);
