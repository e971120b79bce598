package main

import (
	"context"
	"log/slog"
	"time"

	"lekta.dev/lekta/records"
)

// sweepEvery is how often serve deletes expired rows.
const sweepEvery = time.Minute

// sweeper deletes what has expired: hot-state rows of the SQLite store
// (Redis expires its keys itself), reports past --report-ttl and request
// records past --request-records-ttl, so that
// the database does not grow without bound and a report is gone when /bot
// says it is.
type sweeper struct {
	hot interface {
		Sweep(context.Context) (int64, error)
	} // nil with Redis
	records *records.DB
	// requestTTL is --request-records-ttl; 0 (records off) sweeps none:
	// another process sharing the database may keep them.
	requestTTL time.Duration
	logger     *slog.Logger
}

// once sweeps now; failures are logged, since the next sweep retries and
// reads ignore expired rows anyway.
func (s sweeper) once(ctx context.Context) {
	if s.records == nil {
		return
	}
	var hot int64
	var err error
	if s.hot != nil {
		if hot, err = s.hot.Sweep(ctx); err != nil {
			s.logger.Warn("sweep expired hot state", "err", err)
		}
	}
	reports, err := s.records.Sweep(ctx, time.Now())
	if err != nil {
		s.logger.Warn("sweep expired reports", "err", err)
	}
	var requests int64
	if s.requestTTL > 0 {
		if requests, err = s.records.SweepRequests(ctx, time.Now(), s.requestTTL); err != nil {
			s.logger.Warn("sweep expired request records", "err", err)
		}
	}
	if hot+reports+requests > 0 {
		s.logger.Debug("swept", "hot_rows", hot, "reports", reports, "request_records", requests)
	}
}

// every sweeps at once and then every d until ctx ends.
func (s sweeper) every(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		s.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// inBackground runs every(d) in a goroutine of its own until stop is
// called; stop waits for the sweep in progress to end.
func (s sweeper) inBackground(d time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		s.every(ctx, d)
	}()
	return func() {
		cancel()
		<-swept
	}
}
