package cache

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// quietRedisLog drops go-redis's own log lines, which the Redis-down tests
// would otherwise fill with expected dial failures.
type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quietRedisLog{})
	os.Exit(m.Run())
}
