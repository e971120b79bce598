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

// Runner runs the audits River hands this instance, on its renderers and
// the per-host limits; the server implements it (audit.Auditor's Run and
// Lost, with the service's metrics and logs).
type Runner interface {
	// Run starts a queued audit and returns its report; *audit.NotYet
	// when the limits say wait.
	Run(ctx context.Context, req audit.Request) (*audit.Report, error)
	// Lost stores the answer for an audit whose instance stopped while it
	// ran.
	Lost(ctx context.Context, req audit.Request) (*audit.Report, error)
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
	DefaultRenderers   = 2
	DefaultQueueLimit  = 100
	DefaultWindow      = "01:00-05:00"
	DefaultMinInterval = 24 * time.Hour
	DefaultTick        = time.Minute
	// storeMargin is what a job takes beyond its audit's hard limit: the
	// report's storing, retried for a lease's life.
	storeMargin = 45 * time.Second
	// RiverFile is River's SQLite database in the data dir.
	RiverFile = "river.db"
	// joinSnooze is how long a re-audit waits when another audit of its URL
	// answered it: each recorded re-audit is a fetch of its own.
	joinSnooze = 2 * time.Second
	// completedRetention is how long River keeps a completed job.
	completedRetention = time.Hour
	// fetchCooldown is the least time between two fetches of a producer.
	fetchCooldown = 2 * time.Millisecond
	// WebhookTimeout bounds one webhook delivery.
	WebhookTimeout = 10 * time.Second
)

// Queue names: QueueAudits holds every audit, public and re-audits, by
// priority; the others (planning, webhooks) never touch a site's limits.
const (
	QueueAudits = "audits"
	queueOther  = river.QueueDefault
)

// Config is what a Scheduler needs. Guard is required; without Records it
// runs public audits only (no members' re-audits are planned).
type Config struct {
	Records *records.DB
	// DatabaseURL puts River's tables in PostgreSQL; otherwise DataDir
	// holds RiverFile.
	DatabaseURL string
	DataDir     string
	// Guard checks and dials webhook URLs (members supply them).
	Guard *policy.Guard
	// Renderers is how many audits this process runs at a time
	// (DefaultRenderers): River's workers of QueueAudits.
	Renderers int
	// QueueLimit is the most public audits that may wait to start in the
	// shared queue, all instances together (DefaultQueueLimit).
	QueueLimit int
	// Timeout is the audits' hard limit (audit.DefaultTimeout).
	Timeout time.Duration
	// Window and MinInterval are the night window of daily and weekly runs
	// and the shortest interval a site may have.
	Window      Window
	MinInterval time.Duration
	// Tick is how often the leader looks for due re-audits (DefaultTick).
	Tick time.Duration
	// CacheTTL is the result cache's lifetime: a re-audit answered from the
	// cache snoozes until the result expires.
	CacheTTL time.Duration
	// JobTimeout bounds one audit job (Timeout plus the time to store its
	// report, by default); RescueAfter (longer; default JobTimeout + 15s)
	// is when River takes back a job whose instance stopped: a queued job
	// was never taken and runs elsewhere at once, a taken one that had
	// started ends as an error (never run twice), one that had not runs.
	JobTimeout  time.Duration
	RescueAfter time.Duration
	// OutageWait is the longest a job waits between starts refused by an
	// outage of a store or the browser (DefaultOutageWait); such a start
	// counts as none of River's attempts.
	OutageWait time.Duration
	// ReportURL makes a report's address for webhook events.
	ReportURL func(id string) string
	Logger    *slog.Logger
	Now       func() time.Time
}

// client is what the scheduler uses of a River client, whichever its driver.
type client interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	JobUpdate(ctx context.Context, id int64, params *river.JobUpdateParams) (*rivertype.JobRow, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
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
	// tries bounds one queue operation's tries on lost connections: one
	// more than the pool holds (1 on SQLite, which has none to lose).
	tries int
}

// New validates cfg, brings River's schema up to date and builds the client.
func New(ctx context.Context, cfg Config) (*Scheduler, error) {
	if cfg.Guard == nil {
		return nil, errors.New("schedule: a Guard is required")
	}
	if cfg.Renderers <= 0 {
		cfg.Renderers = DefaultRenderers
	}
	if cfg.QueueLimit <= 0 {
		cfg.QueueLimit = DefaultQueueLimit
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = audit.DefaultTimeout
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
		cfg.JobTimeout = cfg.Timeout + storeMargin
	}
	if cfg.RescueAfter <= cfg.JobTimeout {
		cfg.RescueAfter = cfg.JobTimeout + 15*time.Second
	}
	if cfg.OutageWait <= 0 {
		cfg.OutageWait = DefaultOutageWait
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

func (s *Scheduler) openSQLite(ctx context.Context, rc *river.Config) error {
	if s.cfg.DataDir == "" {
		return errors.New("schedule: a data dir or a database URL is required")
	}
	path := filepath.Join(s.cfg.DataDir, RiverFile)
	if err := records.PrivateFile(path); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	// River's notes on SQLite: one open connection for River's pool.
	db.SetMaxOpenConns(1)
	d := newSQLiteDriver(riversqlite.New(db))
	if err := migrate(ctx, d.Driver); err != nil {
		_ = db.Close()
		return fmt.Errorf("prepare River's tables in %s: %w", path, err)
	}
	c, err := river.NewClient(d, rc)
	if err != nil {
		_ = db.Close()
		return fmt.Errorf("start River on %s: %w", path, err)
	}
	s.client, s.sqlDB, s.closer = wakingClient{client: c, driver: d}, db, func() { _ = db.Close() }
	return nil
}

func (s *Scheduler) openPostgres(ctx context.Context, rc *river.Config) error {
	pool, err := pgxpool.New(ctx, s.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("connect River to %s: %w", s.where(), scrub(err, s.cfg.DatabaseURL))
	}
	d := riverpgxv5.New(pool)
	// Instances starting together migrate one after the other.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return fmt.Errorf("connect River to %s: %w", s.where(), scrub(err, s.cfg.DatabaseURL))
	}
	_, err = conn.Exec(ctx, "SELECT pg_advisory_lock(7301024432)")
	if err == nil {
		err = migrate(ctx, d)
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(7301024432)")
	}
	conn.Release()
	if err != nil {
		pool.Close()
		return fmt.Errorf("prepare River's tables in %s: %w", s.where(), err)
	}
	c, err := river.NewClient(d, rc)
	if err != nil {
		pool.Close()
		return fmt.Errorf("start River: %w", err)
	}
	s.client, s.closer = c, pool.Close
	s.tries = int(pool.Config().MaxConns) + 1
	return nil
}

// where names River's database in messages.
func (s *Scheduler) where() string {
	if s.cfg.Records != nil {
		return s.cfg.Records.Where()
	}
	return "PostgreSQL (--database-url)"
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

// Stop stops taking jobs and waits for running ones, or for ctx, then
// cancels any still running and closes River's database pool. Queued jobs
// stay in the queue: another instance, or this one's next start, runs
// them.
func (s *Scheduler) Stop(ctx context.Context) error {
	err := s.client.Stop(ctx)
	if err != nil && ctx.Err() != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err = s.client.StopAndCancel(cctx)
		cancel()
	}
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

// SQLite is River's own SQLite pool, nil on PostgreSQL (for tests).
func (s *Scheduler) SQLite() *sql.DB { return s.sqlDB }
