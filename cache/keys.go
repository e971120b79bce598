package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// DefaultPrefix starts every Redis key and channel unless RedisOptions.Prefix
// says otherwise.
const DefaultPrefix = "lekta:"

// maxIDLen bounds report ids, which become parts of keys.
const maxIDLen = 128

// target is a URL as the store keys it.
type target struct {
	url  string // as given
	host string // lower-case hostname, no port, no trailing dot
	hash string // hex of the first 16 bytes of sha256(url)
}

// parseTarget derives the limiter host and cache hash of a normalised URL.
func parseTarget(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("parse url: %w", err)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return target{}, fmt.Errorf("parse url %q: no hostname", raw)
	}
	if strings.ContainsAny(host, "{}") {
		return target{}, fmt.Errorf("parse url %q: hostname contains a brace", raw)
	}
	sum := sha256.Sum256([]byte(raw))
	return target{url: raw, host: host, hash: hex.EncodeToString(sum[:16])}, nil
}

// checkID rejects report ids that cannot serve as key parts.
func checkID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return fmt.Errorf("report id %q: want 1 to %d bytes", id, maxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c == 0x7f {
			return fmt.Errorf("report id %q: contains a space or control byte", id)
		}
	}
	return nil
}

// checkPrefix rejects prefixes that would change the keys' hash slots.
func checkPrefix(p string) error {
	if strings.ContainsAny(p, "{}") {
		return errors.New("key prefix must not contain braces: they would change the Redis Cluster hash tag")
	}
	return nil
}

// keyspace names every key and channel. All keys of one host carry the hash
// tag {host}, so on Redis Cluster they share a slot and one script can touch
// them all; report keys are looked up by id alone and live anywhere.
type keyspace struct{ prefix string }

// lease is a sorted set: member report id, score lease expiry (unix ms).
func (k keyspace) lease(host string) string { return k.prefix + "{" + host + "}:lease" }

// starts is a sorted set: member report id, score start time (unix ms).
func (k keyspace) starts(host string) string { return k.prefix + "{" + host + "}:starts" }

// resv is a sorted set: member report id, score the start time reserved
// for that queued audit (unix ms).
func (k keyspace) resv(host string) string { return k.prefix + "{" + host + "}:resv" }

// leaseStarts is a sorted set: member report id, score the start of the
// audit holding that lease (unix ms).
func (k keyspace) leaseStarts(host string) string { return k.prefix + "{" + host + "}:lstart" }

// run is a string: the id of the audit of this URL holding a lease.
func (k keyspace) run(t target) string { return k.prefix + "{" + t.host + "}:run:" + t.hash }

// result is a hash: id, at, exp (unix ms), body of the cached result.
func (k keyspace) result(t target) string { return k.prefix + "{" + t.host + "}:res:" + t.hash }

// fin is a string marking that Complete of id succeeded, for idempotent retries.
func (k keyspace) fin(host, id string) string { return k.prefix + "{" + host + "}:fin:" + id }

// report is a hash: at, exp (unix ms), failed, body of a report by id.
func (k keyspace) report(id string) string { return k.prefix + "report:" + id }

// done is the pub/sub channel that Complete of id publishes on.
func (k keyspace) done(host, id string) string { return k.prefix + "{" + host + "}" + doneInfix + id }

// doneAll is the pattern of every done channel under the prefix, for one
// PSUBSCRIBE to all of them (RedisStore.Follow).
func (k keyspace) doneAll() string { return k.prefix + "{*}" + doneInfix + "*" }

// doneInfix separates a done channel's host from its report id.
const doneInfix = ":done:"

// progress is a hash: the progress entry of a queued or running audit.
func (k keyspace) progress(id string) string { return k.prefix + "progress:" + id }
