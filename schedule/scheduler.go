package schedule

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	_ "modernc.org/sqlite" // River's SQLite driver runs on database/sql

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

// ErrBusy: every renderer is busy with public audits; a re-audit waits
// (its job snoozes) so that scheduled work never starves the public form.
var ErrBusy = errors.New("every renderer is busy with public audits")

// Runner runs one re-audit on the service's renderers and per-host limits;
// the server implements it. It returns ErrBusy when public audits hold
// every renderer.
type Runner interface {
	Reaudit(ctx context.Context, req audit.Request) (*audit.Report, error)
}

// ReportReader is a Runner that also returns stored reports by id
// (audit.ErrNotFound once expired): with it, a scheduled re-audit fetches
// conditionally and reuses the previous report's plain extract when the
// site answers 304 Not Modified. A Runner without it fetches unconditionally.
type ReportReader interface {
	StoredReport(ctx context.Context, id string) (*audit.Report, error)
}

// Defaults of Config.
const (
	DefaultWorkers     = 1
	DefaultWindow      = "01:00-05:00"
	DefaultMinInterval = 24 * time.Hour
	DefaultTick        = time.Minute
	DefaultJobTimeout  = 3 * time.Minute
	// RiverFile is River's SQLite database in the data dir.
	RiverFile = "river.db"
	// busySnooze is how long a re-audit waits when the renderers are busy.
	busySnooze = 2 * time.Second
	// WebhookTimeout bounds one webhook delivery.
	WebhookTimeout = 10 * time.Second
)

// Queue names.
const (
	queueReaudit = "reaudit"
	queueOther   = river.QueueDefault
)

// Config is what a Scheduler needs. Records and Guard are required.
type Config struct {
	Records *records.DB
	// DatabaseURL puts River's tables in PostgreSQL; otherwise DataDir
	// holds RiverFile.
	DatabaseURL string
	DataDir     string
	// Guard checks and dials webhook URLs (members supply them).
	Guard *policy.Guard
	// Workers run re-audits at a time in this process (DefaultWorkers).
	Workers int
	// Window and MinInterval are the night window of daily and weekly runs
	// and the shortest interval a site may have.
	Window      Window
	MinInterval time.Duration
	// Tick is how often the leader looks for due re-audits (DefaultTick).
	Tick time.Duration
	// CacheTTL is the result cache's lifetime: a re-audit answered from the
	// cache snoozes until the result expires.
	CacheTTL time.Duration
	// JobTimeout bounds one re-audit job, its wait for a renderer included;
	// RescueAfter (longer) is when River gives a job whose worker died to
	// another (default JobTimeout + 1m).
	JobTimeout  time.Duration
	RescueAfter time.Duration
	// ReportURL makes a report's address for webhook events.
	ReportURL func(id string) string
	Logger    *slog.Logger
	Now       func() time.Time
}

// client is what the scheduler uses of a River client, whichever its driver.
type client interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Scheduler runs members' re-audits on River. Create it with New, then
// Start; Stop lets running re-audits finish.
type Scheduler struct {
	cfg    Config
	runner Runner
	client client
	closer func()
	// SQL is River's database/sql pool on SQLite (nil on PostgreSQL), for tests.
	sqlDB *sql.DB
	web   *http.Client
}

// New validates cfg, brings River's schema up to date and builds the client.
func New(ctx context.Context, cfg Config) (*Scheduler, error) {
	if cfg.Records == nil || cfg.Guard == nil {
		return nil, errors.New("schedule: Records and Guard are required")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Window.Loc == nil {
		cfg.Window, _ = ParseWindow(DefaultWindow, time.UTC)
	}
	if cfg.MinInterval <= 0 {
		cfg.MinInterval = DefaultMinInterval
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = DefaultJobTimeout
	}
	if cfg.RescueAfter <= cfg.JobTimeout {
		cfg.RescueAfter = cfg.JobTimeout + time.Minute
	}
	if cfg.ReportURL == nil {
		cfg.ReportURL = func(id string) string { return "/r/" + id }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Scheduler{cfg: cfg}
	tr := cfg.Guard.Transport()
	s.web = &http.Client{Transport: tr, Timeout: WebhookTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	rc, err := s.riverConfig()
	if err != nil {
		return nil, err
	}
	if cfg.DatabaseURL != "" {
		err = s.openPostgres(ctx, rc)
	} else {
		err = s.openSQLite(ctx, rc)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// riverConfig is the River configuration: the queues, the workers, and the
// leader's periodic job.
func (s *Scheduler) riverConfig() (*river.Config, error) {
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &reauditWorker{s: s}); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &planWorker{s: s}); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &webhookWorker{s: s}); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	poll := min(time.Second, s.cfg.Tick)
	return &river.Config{
		Queues: map[string]river.QueueConfig{
			queueReaudit: {MaxWorkers: s.cfg.Workers},
			queueOther:   {MaxWorkers: 2},
		},
		Workers: workers,
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(s.cfg.Tick),
			func() (river.JobArgs, *river.InsertOpts) { return planArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true, ID: "lekta_plan"})},
		JobTimeout:           s.cfg.JobTimeout,
		RescueStuckJobsAfter: s.cfg.RescueAfter,
		FetchPollInterval:    poll,
		// River's producers report at info every few seconds; the service
		// logs one line per audit, so River speaks from warnings up.
		Logger: slog.New(warnOnly{s.cfg.Logger.Handler()}),
	}, nil
}

func (s *Scheduler) openSQLite(ctx context.Context, rc *river.Config) error {
	if s.cfg.DataDir == "" {
		return errors.New("schedule: a data dir or a database URL is required")
	}
	path := filepath.Join(s.cfg.DataDir, RiverFile)
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	// River's notes on SQLite: one open connection for River's pool.
	db.SetMaxOpenConns(1)
	d := riversqlite.New(db)
	if err := migrate(ctx, d); err != nil {
		_ = db.Close()
		return fmt.Errorf("prepare River's tables in %s: %w", path, err)
	}
	c, err := river.NewClient(d, rc)
	if err != nil {
		_ = db.Close()
		return fmt.Errorf("start River on %s: %w", path, err)
	}
	s.client, s.sqlDB, s.closer = c, db, func() { _ = db.Close() }
	return nil
}

func (s *Scheduler) openPostgres(ctx context.Context, rc *river.Config) error {
	pool, err := pgxpool.New(ctx, s.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("connect River to %s: %w", s.cfg.Records.Where(), scrub(err, s.cfg.DatabaseURL))
	}
	d := riverpgxv5.New(pool)
	// Instances starting together migrate one after the other.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return fmt.Errorf("connect River to %s: %w", s.cfg.Records.Where(), scrub(err, s.cfg.DatabaseURL))
	}
	_, err = conn.Exec(ctx, "SELECT pg_advisory_lock(7301024432)")
	if err == nil {
		err = migrate(ctx, d)
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(7301024432)")
	}
	conn.Release()
	if err != nil {
		pool.Close()
		return fmt.Errorf("prepare River's tables in %s: %w", s.cfg.Records.Where(), err)
	}
	c, err := river.NewClient(d, rc)
	if err != nil {
		pool.Close()
		return fmt.Errorf("start River: %w", err)
	}
	s.client, s.closer = c, pool.Close
	return nil
}

// scrub keeps the database URL (and its password) out of an error.
func scrub(err error, url string) error {
	if url != "" && strings.Contains(err.Error(), url) {
		return errors.New(strings.ReplaceAll(err.Error(), url, "--database-url"))
	}
	return err
}

func migrate[TTx any](ctx context.Context, d riverdriver.Driver[TTx]) error {
	m, err := rivermigrate.New(d, nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// Start starts working jobs on r (and, on the elected leader, planning
// them). The server is both the Runner and a user of the Scheduler, so it
// is handed over here rather than in Config.
func (s *Scheduler) Start(ctx context.Context, r Runner) error {
	if r == nil {
		return errors.New("schedule: Start needs a Runner")
	}
	s.runner = r
	if err := s.client.Start(ctx); err != nil {
		return fmt.Errorf("start River: %w", err)
	}
	return nil
}

// Stop stops taking jobs and waits for running ones, or for ctx; then it
// closes River's database pool.
func (s *Scheduler) Stop(ctx context.Context) error {
	err := s.client.Stop(ctx)
	s.closer()
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stop River: %w", err)
	}
	return nil
}

// CheckSchedule says whether spec is a schedule a member may save here.
func (s *Scheduler) CheckSchedule(spec string) error {
	_, err := ParseSpec(spec, s.cfg.MinInterval)
	return err
}

// RunNow queues a member-triggered re-audit of the site now and returns the
// id its history entry will have.
func (s *Scheduler) RunNow(ctx context.Context, siteID string, at time.Time) (string, error) {
	at = at.Truncate(time.Millisecond)
	_, err := s.client.Insert(ctx, ReauditArgs{SiteID: siteID, DueMS: at.UnixMilli(), Trigger: string(audit.TriggerMember)}, nil)
	if err != nil {
		return "", fmt.Errorf("queue re-audit of %s: %w", siteID, err)
	}
	return records.HistoryID(siteID, at), nil
}

// SQLite is River's own SQLite pool, nil on PostgreSQL (for tests).
func (s *Scheduler) SQLite() *sql.DB { return s.sqlDB }

// warnOnly passes on records from warnings up.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}
func (w warnOnly) WithAttrs(a []slog.Attr) slog.Handler { return warnOnly{w.Handler.WithAttrs(a)} }
func (w warnOnly) WithGroup(n string) slog.Handler      { return warnOnly{w.Handler.WithGroup(n)} }
