package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Complete implements Store. The report is stored in the archive first and
// copied to Redis for joiners; then one script caches the result, releases
// the lease and publishes to joiners.
func (s *RedisStore) Complete(ctx context.Context, l Lease, o Outcome) error {
	t, err := parseTarget(l.URL)
	if err == nil {
		err = checkID(l.ID)
	}
	if err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	blob, err := encodeBlob(o.Report, s.limits.MaxReportBytes)
	if err != nil {
		return fmt.Errorf("complete %s: %w", l.ID, err)
	}
	failed := "0"
	if o.Failed {
		failed = "1"
	}
	if err := archiveReport(ctx, s.archive, s.limits, l.ID, blob, o.Failed, s.localNow()); err != nil {
		return err
	}
	if err := s.putReport(ctx, l.ID, failed, blob); err != nil {
		return err
	}
	cacheBlob := blob
	if o.Failed {
		cacheBlob = nil // not cached: spare the bytes
	}
	keys := []string{s.keys.lease(t.host), s.keys.run(t), s.keys.result(t), s.keys.fin(t.host, l.ID), s.keys.leaseStarts(t.host), s.keys.starts(t.host)}
	ctx, cancel := s.call(ctx)
	defer cancel()
	status, err := scriptComplete.Run(ctx, s.client, keys, s.nowArg(), l.ID, failed,
		s.limits.CacheTTL.Milliseconds(), s.limits.LeaseTTL.Milliseconds(), s.keys.done(t.host, l.ID), cacheBlob, o.Contacted.Milliseconds()).Int64()
	if err != nil {
		return unavailable("complete "+l.ID, err)
	}
	if status != 1 {
		return fmt.Errorf("complete %s: %w", l.ID, ErrLeaseLost)
	}
	return nil
}

func (s *RedisStore) putReport(ctx context.Context, id, failed string, blob []byte) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	err := scriptPutReport.Run(ctx, s.client, []string{s.keys.report(id)}, s.nowArg(),
		s.limits.CacheTTL.Milliseconds(), failed, blob).Err()
	if err != nil {
		return unavailable("store report "+id, err)
	}
	return nil
}

// Report implements Store: from the archive, else from the short copy in
// Redis (a report another instance made while its archive is its own).
func (s *RedisStore) Report(ctx context.Context, id string) (Entry, error) {
	if err := checkID(id); err != nil {
		return Entry{}, fmt.Errorf("report: %w: %w", ErrNotFound, err)
	}
	e, found, err := archived(ctx, s.archive, id, s.localNow())
	if err == nil && !found {
		e, found, err = s.report(ctx, id)
	}
	switch {
	case err != nil:
		return Entry{}, err
	case !found:
		return Entry{}, fmt.Errorf("report %s: %w", id, ErrNotFound)
	}
	return e, nil
}

func (s *RedisStore) report(ctx context.Context, id string) (Entry, bool, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := scriptGetReport.Run(ctx, s.client, []string{s.keys.report(id)}, s.nowArg()).Slice()
	if errors.Is(err, redis.Nil) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, unavailable("report "+id, err)
	}
	if len(res) != 4 {
		return Entry{}, false, fmt.Errorf("report %s: unexpected reply of %d elements", id, len(res))
	}
	at, ok1 := res[0].(int64)
	failed, ok2 := res[1].(string)
	now, ok3 := res[2].(int64)
	body, ok4 := res[3].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return Entry{}, false, fmt.Errorf("report %s: unexpected reply types", id)
	}
	if target, age, isRef, err := parseRef([]byte(body)); isRef || err != nil {
		return s.follow(ctx, id, target, age, err)
	}
	report, err := decodeBlob([]byte(body))
	if err != nil {
		return Entry{}, false, fmt.Errorf("report %s: %w", id, err)
	}
	return Entry{ID: id, Report: report, CompletedAt: time.UnixMilli(at), Age: ms(now - at), Failed: failed == "1"}, true, nil
}

// follow answers the reference id, read from Redis, with the report
// target it points at: from the archive, else from its copy in Redis.
func (s *RedisStore) follow(ctx context.Context, id, target string, age time.Duration, err error) (Entry, bool, error) {
	if err != nil {
		return Entry{}, false, fmt.Errorf("report %s: %w", id, err)
	}
	e, found, err := archived(ctx, s.archive, target, s.localNow())
	if err == nil && !found {
		e, found, err = s.report(ctx, target)
	}
	if err != nil || !found {
		return Entry{}, found, err
	}
	if e.Referred {
		return Entry{}, false, fmt.Errorf("report %s: a reference to a reference", id)
	}
	return referred(id, age, e), true, nil
}
