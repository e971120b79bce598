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
// read), so that a dead or stalled Redis fails closed in about a second.
const DefaultCallTimeout = 300 * time.Millisecond

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
	for _, sc := range []*redis.Script{scriptAdmit, scriptPeek, scriptRenew, scriptSetProgress, scriptGetProgress, scriptComplete, scriptLookup, scriptPutReport, scriptGetReport, scriptRunning} {
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

// admitTail is the constant part of the admit script's arguments.
func admitTail(l Limits) []any {
	tl := []any{l.Concurrency, l.LeaseTTL.Milliseconds(), l.longest().Milliseconds()}
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
	return fmt.Errorf("%s: %w: %w", action, ErrUnavailable, err)
}

// Lookup implements Store.
func (s *RedisStore) Lookup(ctx context.Context, url string) (Entry, bool, error) {
	t, err := parseTarget(url)
	if err != nil {
		return Entry{}, false, fmt.Errorf("lookup: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := scriptLookup.Run(ctx, s.client, []string{s.keys.result(t)}, s.nowArg()).Slice()
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
	keys := []string{s.keys.lease(t.host), s.keys.starts(t.host), s.keys.run(t), s.keys.result(t)}
	args := append([]any{s.nowArg(), id}, s.admitArgs...)
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := scriptAdmit.Run(ctx, s.client, keys, args...).Slice()
	if err != nil {
		return Admission{}, unavailable("admit", err)
	}
	a, err := s.admission(t, id, res)
	if err != nil {
		return Admission{}, fmt.Errorf("admit: %w", err)
	}
	return a, nil
}

// Peek implements Store: the admit script's decision, read-only. Like
// Admit, it first checks that the archive can keep a report.
func (s *RedisStore) Peek(ctx context.Context, url string) (Admission, error) {
	t, err := parseTarget(url)
	if err != nil {
		return Admission{}, fmt.Errorf("peek: %w", err)
	}
	// As Admit: no audit is queued that could not be recorded.
	if err := s.archive.Ping(ctx); err != nil {
		return Admission{}, archiveError("peek", err)
	}
	keys := []string{s.keys.lease(t.host), s.keys.starts(t.host), s.keys.run(t), s.keys.result(t)}
	args := append([]any{s.nowArg(), ""}, s.admitArgs...)
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := scriptPeek.Run(ctx, s.client, keys, args...).Slice()
	if err != nil {
		return Admission{}, unavailable("peek", err)
	}
	a, err := s.admission(t, "", res)
	if err != nil {
		return Admission{}, fmt.Errorf("peek: %w", err)
	}
	if a.Decision == Admitted {
		a.Lease = Lease{}
	}
	return a, nil
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

// admission reads the admit script's reply.
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
		if len(res) == 3 {
			wait, ok1 := res[1].(int64)
			reason, ok2 := res[2].(int64)
			if ok1 && ok2 {
				return Admission{Decision: Refused, RetryAfter: ms(wait), Reason: s.limits.reason(int(reason))}, nil
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
	keys := []string{s.keys.lease(t.host), s.keys.run(t), s.keys.result(t), s.keys.fin(t.host, l.ID)}
	ctx, cancel := s.call(ctx)
	defer cancel()
	status, err := scriptComplete.Run(ctx, s.client, keys, s.nowArg(), l.ID, failed,
		s.limits.CacheTTL.Milliseconds(), s.limits.LeaseTTL.Milliseconds(), s.keys.done(t.host, l.ID), cacheBlob).Int64()
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
