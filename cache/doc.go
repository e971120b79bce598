// Package cache holds the state audits share: the per-host limiter, the
// result cache, in-flight markers for joining an audit of the same URL, and
// stored reports. MemoryStore is the embedded default for one process;
// RedisStore shares the state between processes. Both pass one contract
// suite and implement the same semantics to the millisecond.
//
// An audit goes through a Store in this order:
//
//	e, ok, err := s.Lookup(ctx, url)        // fresh result? answer it, no charge
//	a, err := s.Admit(ctx, url, id)         // one atomic decision
//	switch a.Decision {
//	case Cached:   // a result appeared since Lookup: a.Entry
//	case InFlight: // e, err := s.Wait(ctx, url, a.RunningID)
//	case Refused:  // a.RetryAfter, a.Reason
//	case Admitted: // audit, then s.Complete(ctx, a.Lease, Outcome{...})
//	}
//
// Reports are opaque bytes to the store. All times (windows, leases, cache
// age) come from the store's clock: the injected clock of a MemoryStore, the
// Redis server's TIME for a RedisStore.
//
// Failure handling: every RedisStore error caused by Redis wraps
// ErrUnavailable, and the caller must not audit. An Admit that timed out may
// still have been recorded by a slow Redis; it then holds the host until
// LeaseTTL (fail closed), and retrying Admit with the same id returns that
// same lease. Call Complete with a context of its own, not the audit's
// expired deadline, or the lease is only freed by LeaseTTL.
//
// Redis keys (P is the prefix, "lekta:" by default) all carry a TTL; the keys
// of one host share the {host} hash tag and so one Redis Cluster slot:
//
//	P{host}:lease         zset  report id -> lease expiry (ms)      LeaseTTL
//	P{host}:starts        zset  report id -> start time (ms)        longest window
//	P{host}:run:<h>       str   report id running URL h             LeaseTTL
//	P{host}:res:<h>       hash  id, at, exp, body: cached result    CacheTTL
//	P{host}:fin:<id>      str   Complete of id succeeded            LeaseTTL
//	Preport:<id>          hash  at, exp, failed, body               ReportTTL
//	P{host}:done:<id>     pub/sub channel Complete publishes on
//
// where host is the URL's lower-case hostname without port and h the first
// 128 bits of SHA-256 of the URL, in hex.
package cache
