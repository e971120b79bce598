package cache

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// go-redis has one process-wide logger that prints its diagnostics (failed
// dials, pool events) straight to stderr, beside the program's own log and
// in another format. They repeat what the store's errors already say, so
// they go, at debug level, to the Logger of the most recent RedisStore.
var (
	clientLog     atomic.Pointer[slog.Logger]
	clientLogOnce sync.Once
)

// clientLogger is go-redis's logger while a RedisStore exists.
type clientLogger struct{}

func (clientLogger) Printf(ctx context.Context, format string, v ...any) {
	if l := clientLog.Load(); l != nil {
		l.DebugContext(ctx, "redis client", "detail", fmt.Sprintf(format, v...))
	}
}

// routeClientLog sends go-redis's own log lines to l from now on.
func routeClientLog(l *slog.Logger) {
	clientLog.Store(l)
	clientLogOnce.Do(func() { redis.SetLogger(clientLogger{}) })
}
