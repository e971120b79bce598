package schedule

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"
)

// On SQLite, River tells producers of new jobs through a table that each
// process's listener reads every 50 ms (riversqlite has no LISTEN), so a
// job inserted with a renderer free waited 0-50 ms, 39 ms at the median,
// before a producer fetched it. This process's own inserts now wake its
// listener at once: it reads the table again, finds the insert's
// notification and the producer fetches the job within milliseconds.
// Another process's inserts still come with the 50 ms read.

// sqliteDriver is River's SQLite driver with a listener that the
// process's inserts wake.
type sqliteDriver struct {
	*riversqlite.Driver
	inserted chan struct{}
}

func newSQLiteDriver(d *riversqlite.Driver) *sqliteDriver {
	return &sqliteDriver{Driver: d, inserted: make(chan struct{}, 1)}
}

// GetListener implements riverdriver.Driver.
func (d *sqliteDriver) GetListener(p *riverdriver.GetListenenerParams) riverdriver.Listener {
	return &wokenListener{Listener: d.Driver.GetListener(p), woken: d.inserted}
}

// wake makes the listener read its table now; a wake while it reads is
// kept for its next wait.
func (d *sqliteDriver) wake() { nudge(d.inserted) }

// wokenListener is a listener whose wait between two reads of the
// notification table ends early when woken.
type wokenListener struct {
	riverdriver.Listener
	woken chan struct{}
}

// WaitForNotification implements riverdriver.Listener: the driver's own
// wait, begun again at once (and so reading the table) when woken. A wake
// that comes as the wait returns is kept for the next one.
func (l *wokenListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	for {
		wctx, cancel := context.WithCancel(ctx)
		done, took := make(chan struct{}), make(chan bool, 1)
		go func() {
			select {
			case <-l.woken:
				cancel()
				took <- true
			case <-done:
				took <- false
			}
		}()
		n, err := l.Listener.WaitForNotification(wctx)
		close(done)
		woken := <-took
		cancel()
		if !woken {
			return n, err
		}
		if err != nil && ctx.Err() == nil {
			continue // woken: read the table now
		}
		nudge(l.woken) // keep it for the next wait
		return n, err
	}
}

// nudge leaves a wake in woken unless one is there already.
func nudge(woken chan<- struct{}) {
	select {
	case woken <- struct{}{}:
	default:
	}
}

// wakingClient is a River client whose inserts wake the driver's listener.
type wakingClient struct {
	client
	driver *sqliteDriver
}

func (c wakingClient) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	res, err := c.client.Insert(ctx, args, opts)
	if err == nil {
		c.driver.wake()
	}
	return res, err
}

func (c wakingClient) InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	res, err := c.client.InsertMany(ctx, params)
	if err == nil {
		c.driver.wake()
	}
	return res, err
}
