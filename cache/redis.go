package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// DefaultCallTimeout bounds each network step of a Redis call (dial, write,
// read), so that a dead or stalled Redis fails closed within about three
// seconds (a call is retried once). Measured on a 2-core machine kept at a
// load of 8 (BenchmarkRedisDecisionUnderLoad, with and without -race): p99
// 109–127 ms, p99.9 181–229 ms, slowest 348–362 ms of 20,000 decisions
// from 16 goroutines; 300 ms gave false 503s under such load, 1 s clears
// the slowest nearly threefold.
const DefaultCallTimeout = time.Second

var _ Store = (*RedisStore)(nil)

// RedisOptions tune a RedisStore. The zero value is the production setting.
type RedisOptions struct {
	// Prefix starts every key and channel; DefaultPrefix when empty. It must
	// not contain braces. Tests use a unique prefix each.
	Prefix string
	// Cluster reads the URL as Redis Cluster seed nodes
	// (redis://host:port?addr=host2:port2) and uses a cluster client.
	Cluster bool
	// CallTimeout bounds dial, write and read of each call, replacing any
	// timeouts given in the URL; DefaultCallTimeout when zero. A call is
	// retried at most once, so one store operation gives up after about
	// three CallTimeouts.
	CallTimeout time.Duration
	// PollInterval is how often Wait re-checks a joined audit when no
	// completion message arrives; one second when zero.
	PollInterval time.Duration
	// Logger receives diagnostics; discarded when nil. It also receives
	// go-redis's own log lines at debug level: go-redis has one logger per
	// process, so they go to the Logger of the most recent store.
	Logger *slog.Logger
	// Clock, for tests only, replaces the Redis server's TIME in every
	// script, so windows and TTL checks follow a test clock. Production
	// leaves it nil: all decisions then use Redis time.
	Clock func() time.Time
}

// RedisStore is the Store shared by every process using one Redis or Redis
// Cluster: hot state in Redis, reports by id in its Archive (the SQL
// database). Each decision is one Lua script run in one round trip; when
// Redis or the archive cannot answer within the bounded time, every call
// returns an error wrapping ErrUnavailable and nothing falls back to local
// state. Once they answer again the store works again, without a restart.
//
// Redis keeps a report's bytes only while the result cache does (CacheTTL),
// so that joiners and cached answers on any instance get it at once, even
// when each instance has an archive of its own.
type RedisStore struct {
	client    redis.UniversalClient
	archive   Archive
	limits    Limits
	keys      keyspace
	clock     func() time.Time
	budget    time.Duration
	poll      time.Duration
	log       *slog.Logger
	admitArgs []any // the admit script's ARGV after now and id
}

// NewRedisStore connects to redisURL (redis:// or rediss://), checks that it
// answers, and returns a store enforcing l that keeps reports in archive. A
// Redis that does not answer gives an error wrapping ErrUnavailable; a
// malformed URL or invalid limits give a plain error. Error messages never
// contain the URL. Close does not close the archive.
func NewRedisStore(ctx context.Context, redisURL string, archive Archive, l Limits, o RedisOptions) (*RedisStore, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("new redis store: %w", err)
	}
	if archive == nil {
		return nil, errors.New("new redis store: an archive for reports is required")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := checkPrefix(o.Prefix); err != nil {
		return nil, fmt.Errorf("new redis store: %w", err)
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.PollInterval <= 0 {
		o.PollInterval = defaultPoll
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	routeClientLog(o.Logger)
	client, err := newRedisClient(redisURL, o)
	if err != nil {
		return nil, fmt.Errorf("new redis store: %w", err)
	}
	s := &RedisStore{
		client:    client,
		archive:   archive,
		limits:    l,
		keys:      keyspace{prefix: o.Prefix},
		clock:     o.Clock,
		budget:    3 * o.CallTimeout,
		poll:      o.PollInterval,
		log:       o.Logger,
		admitArgs: admitTail(l),
	}
	if err := s.loadScripts(ctx); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("new redis store: %w", err)
	}
	return s, nil
}

// loadScripts checks that Redis answers and loads every script, so that each
// decision afterwards is one EVALSHA. After a Redis restart empties the
// script cache, the first call of each script falls back to EVAL once.
func (s *RedisStore) loadScripts(ctx context.Context) error {
	if err := s.pingRedis(ctx); err != nil {
		return err
	}
	for _, sc := range []*redis.Script{scriptAdmit, scriptReserve, scriptRenew, scriptSetProgress, scriptGetProgress, scriptComplete, scriptLookup, scriptPutReport, scriptGetReport, scriptRunning} {
		ctx, cancel := s.call(ctx)
		err := sc.Load(ctx, s.client).Err()
		cancel()
		if err != nil {
			return unavailable("load scripts", err)
		}
	}
	return nil
}

// newRedisClient builds a client that fails closed quickly: short timeouts,
// one retry, one dial attempt per try, context deadlines honoured.
func newRedisClient(redisURL string, o RedisOptions) (redis.UniversalClient, error) {
	t := o.CallTimeout
	off := &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if o.Cluster {
		co, err := redis.ParseClusterURL(redisURL)
		if err != nil {
			return nil, fmt.Errorf("parse redis cluster url: %w", redactURL(err))
		}
		co.DialTimeout, co.ReadTimeout, co.WriteTimeout, co.PoolTimeout = t, t, t, t
		co.ContextTimeoutEnabled = true
		co.MaxRetries, co.DialerRetries, co.DialerRetryTimeout = 1, 1, 50*time.Millisecond
		co.MaxRetryBackoff = 100 * time.Millisecond
		co.DisableIdentity = true
		co.MaintNotificationsConfig = off
		return redis.NewClusterClient(co), nil
	}
	ro, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", redactURL(err))
	}
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout, ro.PoolTimeout = t, t, t, t
	ro.ContextTimeoutEnabled = true
	ro.MaxRetries, ro.DialerRetries, ro.DialerRetryTimeout = 1, 1, 50*time.Millisecond
	ro.MaxRetryBackoff = 100 * time.Millisecond
	ro.DisableIdentity = true
	ro.MaintNotificationsConfig = off
	return redis.NewClient(ro), nil
}

// redactURL drops the URL, which may hold a password, from a parse error.
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// admitTail is the constant part of the admit and reserve scripts'
// arguments after now and id (ARGV[3] to ARGV[12], then the windows from
// ARGV[13], as decide.lua lists them), but for within (ARGV[9]) and the
// URL's hash (ARGV[11]), which decision fills in.
func admitTail(l Limits) []any {
	tl := []any{l.Concurrency, l.LeaseTTL.Milliseconds(), l.longest().Milliseconds(),
		l.LeaseMin.Milliseconds(), l.typical(), ReserveGrace.Milliseconds(), 0, l.StartSlack.Milliseconds(), "",
		l.CacheTTL.Milliseconds()}
	for _, w := range l.Windows {
		tl = append(tl, w.N, w.Per.Milliseconds())
	}
	return tl
}

// call bounds one store operation.
func (s *RedisStore) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.budget)
}

// nowArg is the clock argument of every script: 0 lets Redis use TIME.
func (s *RedisStore) nowArg() int64 {
	if s.clock == nil {
		return 0
	}
	return s.clock().UnixMilli()
}

// localNow is the time of the archive's rows: the test clock, else this
// machine's, which may differ from Redis TIME by the clocks' skew.
func (s *RedisStore) localNow() int64 {
	if s.clock == nil {
		return time.Now().UnixMilli()
	}
	return s.clock().UnixMilli()
}

// unavailable wraps a failed Redis call so callers can fail closed.
func unavailable(action string, err error) error {
	return fmt.Errorf("%s: %w: %w", action, ErrRedisUnavailable, err)
}

// Ping implements Store: Redis and the archive answer.
func (s *RedisStore) Ping(ctx context.Context) error {
	if err := s.pingRedis(ctx); err != nil {
		return err
	}
	if err := s.archive.Ping(ctx); err != nil {
		return archiveError("ping records", err)
	}
	return nil
}

func (s *RedisStore) pingRedis(ctx context.Context) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.client.Ping(ctx).Err(); err != nil {
		return unavailable("ping redis", err)
	}
	return nil
}

// Close implements Store.
func (s *RedisStore) Close() error {
	if err := s.client.Close(); err != nil {
		return fmt.Errorf("close redis: %w", err)
	}
	return nil
}
