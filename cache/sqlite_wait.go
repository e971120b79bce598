package cache

import (
	"context"
	"fmt"
	"time"
)

// Wait implements Store. It re-reads the database every PollInterval, and
// at once when this process completes an audit.
func (s *SQLiteStore) Wait(ctx context.Context, url, id string) (Entry, error) {
	t, err := parseTarget(url)
	if err == nil {
		err = checkID(id)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("wait: %w", err)
	}
	s.mu.Lock()
	s.waiting++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
	}()
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		e, done, err := s.joinState(ctx, t, id)
		if done || err != nil {
			return e, err
		}
		select {
		case <-ctx.Done():
			return Entry{}, fmt.Errorf("wait for %s: %w", id, ctx.Err())
		case <-changed:
		case <-tick.C:
		}
	}
}

// joinState checks a joined audit once: its report if stored, nothing if
// it still holds its lease, ErrAbandoned if neither. The report is read
// again after the lease check, since Complete stores it before releasing.
func (s *SQLiteStore) joinState(ctx context.Context, t target, id string) (Entry, bool, error) {
	now := s.clock()
	if e, found, err := archived(ctx, s.archive, id, now); err != nil || found {
		return e, true, err
	}
	var exp int64
	err := s.reads.leaseOf.QueryRowContext(ctx, t.host, id).Scan(&exp)
	if err == nil && exp > now {
		return Entry{}, false, nil
	}
	if err != nil && !isNoRows(err) {
		return Entry{}, true, s.fail("wait for "+id, err)
	}
	e, found, err := archived(ctx, s.archive, id, now)
	switch {
	case err != nil:
		return Entry{}, true, err
	case !found:
		return Entry{}, true, fmt.Errorf("wait for %s: %w", id, ErrAbandoned)
	}
	return e, true, nil
}
