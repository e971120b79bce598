-- Version 8: on PostgreSQL, reports and request_records become partitioned
-- tables (see migrations/postgres/0008_partitions.sql). The SQLite file is
-- one machine's store and keeps its tables and its sweep by DELETE: this
-- version changes nothing here, so that versions mean the same in both.
SELECT 1;
