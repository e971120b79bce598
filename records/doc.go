// Package records keeps Lekta's durable records in one SQL database:
// reports by id, request records (one row per request an audit sent to a
// site, for --request-records-ttl, read by package verify through
// DB.Candidates), and members, saved sites and re-audit history as they
// arrive. It is the only package (besides River in
// schedule) that imports SQL drivers.
//
// State has two roles. Hot state (per-host windows, concurrency leases,
// in-flight markers, the 15-minute result cache) lives in Redis when
// --redis-url is set and otherwise in this database's hot_* tables, which
// package cache reads and writes through the *sql.DB that DB.SQL returns.
// Records (reports for --report-ttl, request records for
// --request-records-ttl, and what follows) always live here.
//
// The database is one of:
//
//   - SQLite (the default): the file lekta.db in the data dir, through
//     modernc.org/sqlite (pure Go, so CGO_ENABLED=0 builds work). WAL mode
//     and a busy timeout let every `lekta audit` process and one `lekta
//     serve` on a machine share it; writers take the lock up front (BEGIN
//     IMMEDIATE) so that two processes never deadlock upgrading a read lock.
//   - PostgreSQL (Config.DatabaseURL, postgres://…), through
//     github.com/jackc/pgx/v5, shared by every instance of a scale-out
//     deployment whose hot state is in Redis.
//
// The schema is versioned: SQL files embedded under migrations/<dialect>/,
// named NNNN_name.sql, applied in order inside one transaction and recorded
// in the schema_migrations table. A database whose schema is newer than the
// binary knows is refused with ErrSchemaTooNew and never written to.
//
// Failure handling: an error caused by the database (down, locked, read-only,
// full, corrupt) wraps ErrUnavailable and says which of these it was; callers
// fail closed and start no audit. No error or Where string ever contains the
// password of a DatabaseURL.
package records
