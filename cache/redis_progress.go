package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// SetProgress implements Store.
func (s *RedisStore) SetProgress(ctx context.Context, p Progress) error {
	if err := checkProgress(p); err != nil {
		return fmt.Errorf("set progress: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	var starts int64
	if !p.StartsAt.IsZero() {
		starts = p.StartsAt.UnixMilli()
	}
	err := scriptSetProgress.Run(ctx, s.client, []string{s.keys.progress(p.ID)}, s.nowArg(),
		progressTTL(p).Milliseconds(), p.URL, p.Status, p.Step, p.Position, starts).Err()
	if err != nil {
		return unavailable("set progress "+p.ID, err)
	}
	return nil
}

// Progress implements Store.
func (s *RedisStore) Progress(ctx context.Context, id string) (Progress, bool, error) {
	if checkID(id) != nil {
		return Progress{}, false, nil
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := scriptGetProgress.Run(ctx, s.client, []string{s.keys.progress(id)}, s.nowArg()).Slice()
	if errors.Is(err, redis.Nil) {
		return Progress{}, false, nil
	}
	if err != nil {
		return Progress{}, false, unavailable("progress "+id, err)
	}
	if len(res) != 6 {
		return Progress{}, false, fmt.Errorf("progress %s: unexpected reply of %d elements", id, len(res))
	}
	url, ok1 := res[0].(string)
	status, ok2 := res[1].(string)
	step, ok3 := res[2].(string)
	pos, ok4 := res[3].(int64)
	at, ok5 := res[4].(int64)
	starts, ok6 := res[5].(int64)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return Progress{}, false, fmt.Errorf("progress %s: unexpected reply types", id)
	}
	p := Progress{ID: id, URL: url, Status: status, Step: step, Position: int(pos), UpdatedAt: time.UnixMilli(at)}
	if starts > 0 {
		p.StartsAt = time.UnixMilli(starts)
	}
	return p, true, nil
}

// DropProgress implements Store.
func (s *RedisStore) DropProgress(ctx context.Context, id string) error {
	if checkID(id) != nil {
		return nil
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.client.Del(ctx, s.keys.progress(id)).Err(); err != nil {
		return unavailable("drop progress "+id, err)
	}
	return nil
}
