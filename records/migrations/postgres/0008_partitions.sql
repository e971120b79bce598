-- Version 8: reports and request_records partitioned, so that what expires
-- leaves as whole partitions (DROP TABLE) instead of row by row.
--
-- reports: by day of completed_at (reports_pYYYYMMDD). A report is deleted
-- when it expires, as before (a few rows a second at a million audits a
-- day); a day's partition, empty once its last report expired, is dropped,
-- and its dead rows with it, without waiting for VACUUM.
--
-- request_records: by hour of at (request_records_pYYYYMMDDHH). A whole
-- hour is dropped once every record in it is older than
-- --request-records-ttl: no row is deleted one by one (about 20 million a
-- day at a million audits a day). Verification and `lekta records` read
-- one host's time window, which touches only the hours it spans.
--
-- Each has a DEFAULT partition for rows no partition covers yet (every
-- process that opens the database creates the next 48 hours' partitions;
-- the sweep creates them ahead and drops the old ones). Times are unix
-- milliseconds, UTC.

ALTER TABLE reports RENAME TO reports_v7;
ALTER TABLE reports_v7 RENAME CONSTRAINT reports_pkey TO reports_v7_pkey;
ALTER INDEX reports_expires_at RENAME TO reports_v7_expires_at;
CREATE TABLE reports (
	id           TEXT NOT NULL,
	completed_at BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL,
	failed       BOOLEAN NOT NULL,
	body         BYTEA NOT NULL,
	-- A partitioned table's keys hold its partition key: ids are unique by
	-- themselves (random), and a report stored again under its id replaces
	-- the earlier row (records.PutReport).
	PRIMARY KEY (id, completed_at)
) PARTITION BY RANGE (completed_at);
-- The sweep deletes by expiry.
CREATE INDEX reports_expires_at ON reports (expires_at);
CREATE TABLE reports_default PARTITION OF reports DEFAULT;

ALTER TABLE request_records RENAME TO request_records_v7;
ALTER TABLE request_records_v7 RENAME CONSTRAINT request_records_pkey TO request_records_v7_pkey;
ALTER INDEX request_records_host_at RENAME TO request_records_v7_host_at;
ALTER INDEX request_records_at RENAME TO request_records_v7_at;
-- PostgreSQL before 17 has no identity columns on partitioned tables: the
-- ids come from a sequence of their own.
CREATE SEQUENCE request_records_ids;
CREATE TABLE request_records (
	id          BIGINT NOT NULL DEFAULT nextval('request_records_ids'),
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
	audit_id    TEXT NOT NULL,
	PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
ALTER SEQUENCE request_records_ids OWNED BY request_records.id;
-- Verification and `lekta records --host` read one host's window. No index
-- on at alone: the sweep drops partitions by their bounds.
CREATE INDEX request_records_host_at ON request_records (host, at);
CREATE TABLE request_records_default PARTITION OF request_records DEFAULT;

-- A partition for every day and hour that holds rows, from the oldest to
-- 48 hours from now; then the rows move over.
DO $$
DECLARE
	day  CONSTANT BIGINT := 86400000;
	hour CONSTANT BIGINT := 3600000;
	ahead BIGINT := (extract(epoch FROM now()) * 1000)::BIGINT + 48 * hour;
	t BIGINT;
BEGIN
	SELECT min(completed_at) INTO t FROM reports_v7;
	t := coalesce(least(t, ahead - 48 * hour), ahead - 48 * hour);
	t := t - t % day;
	WHILE t < ahead LOOP
		EXECUTE format('CREATE TABLE reports_p%s PARTITION OF reports FOR VALUES FROM (%s) TO (%s)',
			to_char(to_timestamp(t / 1000) AT TIME ZONE 'UTC', 'YYYYMMDD'), t, t + day);
		t := t + day;
	END LOOP;
	SELECT min(at) INTO t FROM request_records_v7;
	t := coalesce(least(t, ahead - 48 * hour), ahead - 48 * hour);
	t := t - t % hour;
	WHILE t < ahead LOOP
		EXECUTE format('CREATE TABLE request_records_p%s PARTITION OF request_records FOR VALUES FROM (%s) TO (%s)',
			to_char(to_timestamp(t / 1000) AT TIME ZONE 'UTC', 'YYYYMMDDHH24'), t, t + hour);
		t := t + hour;
	END LOOP;
END
$$;

INSERT INTO reports (id, completed_at, expires_at, failed, body)
	SELECT id, completed_at, expires_at, failed, body FROM reports_v7;
DROP TABLE reports_v7;
INSERT INTO request_records (id, at, lane, method, scheme, host, port, path, query_hash, remote_addr, remote_port,
		local_addr, local_port, status, error_class, bytes, audit_id)
	SELECT id, at, lane, method, scheme, host, port, path, query_hash, remote_addr, remote_port,
		local_addr, local_port, status, error_class, bytes, audit_id FROM request_records_v7;
SELECT setval('request_records_ids', coalesce((SELECT max(id) FROM request_records_v7), 0) + 1, false);
DROP TABLE request_records_v7;
