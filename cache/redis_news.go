package cache

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Sink is told that reports were stored, to wake their waiters
// (wake.Hub implements it; declared here so that cache imports no
// project package).
type Sink interface {
	// Signal: the report id may be stored now.
	Signal(id string)
	// All: some news may have been missed; every waiter reads again.
	All()
}

// Follow tells sink of every report Complete stores on any instance that
// shares this Redis, until ctx ends: one pattern subscription for the
// process to the channels Complete publishes on (P{host}:done:<id>), not
// one per waiter. A message sent while the subscription was away is lost,
// so every subscription after the first (go-redis resubscribes on its own
// after a broken connection) wakes every waiter.
func (s *RedisStore) Follow(ctx context.Context, sink Sink) {
	ps := s.client.PSubscribe(ctx, s.keys.doneAll())
	defer ps.Close()
	msgs := ps.ChannelWithSubscriptions()
	subscribed := false
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-msgs:
			if !ok {
				return
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if subscribed {
					s.log.Debug("report news resubscribed; waking every waiter")
					sink.All()
				}
				subscribed = true
			case *redis.Message:
				if i := strings.LastIndex(m.Channel, doneInfix); i >= 0 {
					sink.Signal(m.Channel[i+len(doneInfix):])
				}
			}
		}
	}
}
