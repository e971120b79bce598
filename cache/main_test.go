package cache

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"lekta.dev/lekta/internal/pgtest"
)

// quietRedisLog drops go-redis's own log lines, which the Redis-down tests
// would otherwise fill with expected dial failures.
type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	if spec := os.Getenv(benchChildEnv); spec != "" {
		os.Exit(benchChild(spec))
	}
	redis.SetLogger(quietRedisLog{})
	os.Exit(pgtest.Main(m))
}
