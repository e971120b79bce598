// Package cache holds the hot state audits share: the per-host limiter, the
// result cache and in-flight markers for joining an audit of the same URL.
// Reports by id are the records role: every store but the memory one keeps
// them in an Archive (package records' SQL database), which cache declares
// so that it imports no project package.
//
// Three stores pass one contract suite and implement the same semantics to
// the millisecond:
//
//   - SQLiteStore, the default on one machine: hot state in the hot_*
//     tables of the records SQLite file, shared by every `lekta audit`
//     process and `lekta serve` using that file; joiners in other processes
//     poll.
//   - RedisStore, with --redis-url: hot state shared by every instance
//     using one Redis; reports in the archive (PostgreSQL at scale, or this
//     machine's SQLite), with a copy in Redis while the result is cached.
//   - MemoryStore, for tests: everything in one process's memory, reports
//     included, lost when it ends.
//
// The windows count real starts and reservations alike, so a queued
// audit's start is promised: Admit keeps the starts others reserved, and a
// reserved audit running late goes first, moving those behind it back. A
// lease lives at least LeaseMin (the hard limit plus a margin) from its
// admission, so a holder that can neither renew nor stop (a paused
// process) never overlaps the next audit of its host.
//
// An audit goes through a Store in this order:
//
//	e, ok, err := s.Lookup(ctx, url)        // fresh result? answer it, no charge
//	r, err := s.Reserve(ctx, url, id, max)  // a queue's answer: when may it start? no charge;
//	                                        // the start is held for id (Reserved, r.StartsAt)
//	a, err := s.Admit(ctx, url, id)         // one atomic decision, when it really starts
//	switch a.Decision {
//	case Cached:   // a result appeared since Lookup: a.Entry
//	case InFlight: // e, err := s.Wait(ctx, url, a.RunningID)
//	case Refused:  // a.RetryAfter, a.Reason (a reservation moves to a.StartsAt)
//	case Admitted: // audit, s.Renew(ctx, a.Lease) every LeaseTTL/3,
//	               // then s.Complete(ctx, a.Lease, Outcome{...})
//	}
//
// SetProgress, Progress and DropProgress keep where a queued or running
// audit stands, so that every instance can answer for it.
//
// Reports are opaque bytes to the store. All times (windows, leases, cache
// age) come from the store's clock: the injected clock of a MemoryStore or
// SQLiteStore (time.Now in production, one clock for every process on the
// machine), the Redis server's TIME for a RedisStore (the archive's rows use
// this machine's clock).
//
// Failure handling: every error caused by Redis, the SQLite file or the
// archive wraps ErrUnavailable, and the caller must not audit. Admit asks the
// archive first whether it can keep a report (Archive.Ping), so an audit that
// could not be recorded is never started. An Admit that timed out may
// still have been recorded by a slow Redis; it then holds the host until
// LeaseTTL (fail closed), and retrying Admit with the same id returns that
// same lease. Call Complete with a context of its own, not the audit's
// expired deadline, or the lease is only freed by LeaseTTL.
//
// Redis keys (P is the prefix, "lekta:" by default) all carry a TTL; the keys
// of one host share the {host} hash tag and so one Redis Cluster slot:
//
//	P{host}:lease         zset  report id -> lease expiry (ms)      max(LeaseTTL, LeaseMin)
//	P{host}:lstart        zset  report id -> its audit's start (ms) as the lease
//	P{host}:starts        zset  report id -> start time (ms)        longest window
//	P{host}:resv          zset  report id -> reserved start (ms)    latest + ReserveGrace
//	P{host}:run:<h>       str   report id running URL h             LeaseTTL
//	P{host}:res:<h>       hash  id, at, exp, body: cached result    CacheTTL
//	P{host}:fin:<id>      str   Complete of id succeeded            LeaseTTL
//	Preport:<id>          hash  at, exp, failed, body (a copy)      CacheTTL
//	Pprogress:<id>        hash  url, status, step, pos, at, exp, starts  ProgressTTL past its start
//	P{host}:done:<id>     pub/sub channel Complete publishes on
//
// where host is the URL's lower-case hostname without port and h the first
// 128 bits of SHA-256 of the URL, in hex. SQLiteStore keeps the same state in
// rows (see sqlite_stmts.go), each with its expiry; Sweep deletes expired
// rows, and the caller runs it periodically.
package cache
