package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lookup implements Store.
func (s *RedisStore) Lookup(ctx context.Context, url string) (Entry, bool, error) {
	t, err := parseTarget(url)
	if err != nil {
		return Entry{}, false, fmt.Errorf("lookup: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := scriptLookup.Run(ctx, s.client, []string{s.keys.result(t)}, s.nowArg(), s.limits.CacheTTL.Milliseconds()).Slice()
	if errors.Is(err, redis.Nil) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, unavailable("lookup", err)
	}
	e, err := resultEntry(res)
	if err != nil {
		return Entry{}, false, fmt.Errorf("lookup: %w", err)
	}
	return e, true, nil
}

// Admit implements Store. It first checks that the archive can keep the
// report, so that no audit runs that could not be recorded.
func (s *RedisStore) Admit(ctx context.Context, url, id string) (Admission, error) {
	t, err := parseTarget(url)
	if err == nil {
		err = checkID(id)
	}
	if err != nil {
		return Admission{}, fmt.Errorf("admit: %w", err)
	}
	if err := s.archive.Ping(ctx); err != nil {
		return Admission{}, archiveError("admit", err)
	}
	return s.decision(ctx, "admit", scriptAdmit, t, id, 0)
}

// Reserve implements Store; like Admit, it first checks that the archive
// can keep a report.
func (s *RedisStore) Reserve(ctx context.Context, url, id string, within time.Duration) (Admission, error) {
	t, err := parseTarget(url)
	if err == nil {
		err = checkID(id)
	}
	if err != nil {
		return Admission{}, fmt.Errorf("reserve: %w", err)
	}
	if err := s.archive.Ping(ctx); err != nil {
		return Admission{}, archiveError("reserve", err)
	}
	return s.decision(ctx, "reserve", scriptReserve, t, id, within)
}

// decision runs the admit or reserve script for id on t.
func (s *RedisStore) decision(ctx context.Context, action string, sc *redis.Script, t target, id string, within time.Duration) (Admission, error) {
	keys := []string{s.keys.lease(t.host), s.keys.starts(t.host), s.keys.run(t), s.keys.result(t),
		s.keys.resv(t.host), s.keys.leaseStarts(t.host)}
	args := append([]any{s.nowArg(), id}, s.admitArgs...)
	args[8], args[10] = within.Milliseconds(), t.hash
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := sc.Run(ctx, s.client, keys, args...).Slice()
	if err != nil {
		return Admission{}, unavailable(action, err)
	}
	a, err := s.admission(t, id, res)
	if err != nil {
		return Admission{}, fmt.Errorf("%s: %w", action, err)
	}
	return a, nil
}

// Unreserve implements Store.
func (s *RedisStore) Unreserve(ctx context.Context, url, id string) error {
	t, err := parseTarget(url)
	if err != nil {
		return fmt.Errorf("unreserve: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.client.ZRem(ctx, s.keys.resv(t.host), t.hash+":"+id).Err(); err != nil {
		return unavailable("unreserve", err)
	}
	return nil
}

// Renew implements Store.
func (s *RedisStore) Renew(ctx context.Context, l Lease) error {
	t, err := parseTarget(l.URL)
	if err == nil {
		err = checkID(l.ID)
	}
	if err != nil {
		return fmt.Errorf("renew: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	n, err := scriptRenew.Run(ctx, s.client, []string{s.keys.lease(t.host), s.keys.run(t)},
		s.nowArg(), l.ID, s.limits.LeaseTTL.Milliseconds()).Int64()
	if err != nil {
		return unavailable("renew "+l.ID, err)
	}
	if n != 1 {
		return fmt.Errorf("renew %s: %w", l.ID, ErrLeaseLost)
	}
	return nil
}

// admission reads the admit and reserve scripts' replies.
func (s *RedisStore) admission(t target, id string, res []any) (Admission, error) {
	if len(res) == 0 {
		return Admission{}, errors.New("empty script reply")
	}
	switch code, _ := res[0].(int64); code {
	case replyAdmitted:
		return Admission{Decision: Admitted, Lease: Lease{Host: t.host, URL: t.url, ID: id}}, nil
	case replyCached:
		e, err := resultEntry(res[1:])
		return Admission{Decision: Cached, Entry: e}, err
	case replyInFlight:
		if len(res) == 2 {
			if running, ok := res[1].(string); ok {
				return Admission{Decision: InFlight, RunningID: running}, nil
			}
		}
	case replyRefused:
		if len(res) == 3 || len(res) == 4 {
			wait, ok1 := res[1].(int64)
			reason, ok2 := res[2].(int64)
			if ok1 && ok2 {
				a := Admission{Decision: Refused, RetryAfter: ms(wait), Reason: s.limits.reason(int(reason))}
				if len(res) == 4 {
					if moved, ok := res[3].(int64); ok && moved > 0 {
						a.StartsAt = time.UnixMilli(moved)
					}
				}
				return a, nil
			}
		}
	case replyReserved:
		if len(res) == 2 || len(res) == 3 {
			if at, ok := res[1].(int64); ok {
				a := Admission{Decision: Reserved, StartsAt: time.UnixMilli(at)}
				if len(res) == 3 {
					reason, _ := res[2].(int64)
					a.Reason = s.limits.reason(int(reason))
				}
				return a, nil
			}
		}
	}
	return Admission{}, fmt.Errorf("unexpected script reply %v", res)
}

// resultEntry reads {id, at, now, body} as the lookup and admit scripts return it.
func resultEntry(res []any) (Entry, error) {
	if len(res) != 4 {
		return Entry{}, fmt.Errorf("unexpected result reply of %d elements", len(res))
	}
	id, ok1 := res[0].(string)
	at, ok2 := res[1].(int64)
	now, ok3 := res[2].(int64)
	body, ok4 := res[3].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return Entry{}, errors.New("unexpected result reply types")
	}
	report, err := decodeBlob([]byte(body))
	if err != nil {
		return Entry{}, err
	}
	return Entry{ID: id, Report: report, CompletedAt: time.UnixMilli(at), Age: ms(now - at)}, nil
}
