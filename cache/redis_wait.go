package cache

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Wait implements Store. It subscribes to the audit's completion channel,
// then checks the state, and re-checks on every message and every
// PollInterval, so a lost message only delays it. A Redis failure while
// waiting returns an error wrapping ErrUnavailable.
func (s *RedisStore) Wait(ctx context.Context, url, id string) (Entry, error) {
	t, err := parseTarget(url)
	if err == nil {
		err = checkID(id)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("wait: %w", err)
	}
	sub := s.client.Subscribe(ctx, s.keys.done(t.host, id))
	defer sub.Close()
	if _, err := sub.ReceiveTimeout(ctx, s.budget); err != nil {
		return Entry{}, unavailable("wait for "+id, err)
	}
	msgs := sub.Channel()
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	for {
		e, done, err := s.joinState(ctx, t, id)
		if done || err != nil {
			return e, err
		}
		select {
		case <-ctx.Done():
			return Entry{}, fmt.Errorf("wait for %s: %w", id, ctx.Err())
		case _, ok := <-msgs:
			if !ok {
				s.log.Debug("completion channel closed; polling", "report_id", id)
				msgs = nil
			}
		case <-tick.C:
		}
	}
}

// joinState checks a joined audit once: its report if stored, nothing if it
// still holds its lease, ErrAbandoned if it neither finished nor runs. The
// report is read again after the lease check because Complete writes the
// report before it releases the lease; then from the archive too, for a
// join that comes after Redis's copy expired.
func (s *RedisStore) joinState(ctx context.Context, t target, id string) (Entry, bool, error) {
	if e, found, err := s.report(ctx, id); err != nil || found {
		return e, true, err
	}
	running, err := s.running(ctx, t, id)
	if err != nil || running {
		return Entry{}, err != nil, err
	}
	e, found, err := s.report(ctx, id)
	if err == nil && !found {
		e, found, err = archived(ctx, s.archive, id, s.localNow())
	}
	switch {
	case err != nil:
		return Entry{}, true, err
	case !found:
		return Entry{}, true, fmt.Errorf("wait for %s: %w", id, ErrAbandoned)
	}
	return e, true, nil
}

func (s *RedisStore) running(ctx context.Context, t target, id string) (bool, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	n, err := scriptRunning.Run(ctx, s.client, []string{s.keys.lease(t.host)}, s.nowArg(), id).Int64()
	if err != nil && err != redis.Nil {
		return false, unavailable("wait for "+id, err)
	}
	return n == 1, nil
}
