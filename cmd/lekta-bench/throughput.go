package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// throughput runs b.o.load audits at once on each build, twice each,
// alternating: the static page on the servers of the warm run
// (--renderers 2), each build probed meanwhile with single audits while
// the other carries the load; then the SPA on a pair of servers with one
// renderer, which the page's floor bounds: one audit at a time waits at
// least that long.
func (b *bench) throughput(ctx context.Context, out io.Writer) error {
	static, probed, err := b.loadRuns(ctx, b.base, b.next, staticPage, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nthroughput, lekta serve --renderers 2, %d audits of the static page at once: base %.0f/min, new %.0f/min, new/base %.2f\n",
		b.o.load, medianF(static["base"]), medianF(static["new"]), medianF(static["new"])/medianF(static["base"]))
	for _, name := range []string{"base", "new"} {
		as := probed[name]
		if len(as) == 0 {
			continue
		}
		fmt.Fprintf(out, "  %s, single audits of the static page while the other build carried the load (%d): POST→start p50 %v, p90 %v; client p50 %v, client/duration_ms %.2f\n",
			name, len(as), median(pick(as, lag)), p90(pick(as, lag)), median(pick(as, clientTime)), perDuration(as))
	}
	one := [2]*server{}
	for i, c := range []struct{ name, bin string }{{"base", b.o.base}, {"new", b.o.next}} {
		if one[i], err = startServer(ctx, c.name, c.bin, 1, b.flags); err != nil {
			return err
		}
		defer one[i].stop()
	}
	spa, _, err := b.loadRuns(ctx, one[0], one[1], spaPage, false)
	if err != nil {
		return err
	}
	floor := b.floors[spaPage.kind]
	fmt.Fprintf(out, "throughput, lekta serve --renderers 1, %d audits of the SPA at once: base %.0f/min, new %.0f/min, new/base %.2f (one audit at a time cannot pass 60 s / its floor %v = %.0f/min)\n",
		b.o.load, medianF(spa["base"]), medianF(spa["new"]), medianF(spa["new"])/medianF(spa["base"]),
		floor, time.Minute.Seconds()/floor.Seconds())
	return nil
}

// loadRuns runs the load of page on base and next, twice each,
// alternating, and returns the audits a minute of each; with probe, the
// build not under load audits the static page one at a time meanwhile.
func (b *bench) loadRuns(ctx context.Context, base, next *server, p page, probe bool) (rates map[string][]float64, probed map[string][]answer, err error) {
	rates, probed = map[string][]float64{}, map[string][]answer{}
	for round := range 2 {
		for _, pair := range [][2]*server{{base, next}, {next, base}} {
			s, other := pair[0], pair[1]
			var stop func() []answer
			if probe {
				stop = probeWhile(ctx, other, fmt.Sprintf("probe%d-%s", round, s.name))
			}
			rate, err := b.load(ctx, s, p, round)
			if stop != nil {
				probed[other.name] = append(probed[other.name], stop()...)
			}
			if err != nil {
				return nil, nil, err
			}
			rates[s.name] = append(rates[s.name], rate)
		}
	}
	return rates, probed, nil
}

// load submits b.o.load audits of p to s at once and returns the audits a
// minute.
func (b *bench) load(ctx context.Context, s *server, p page, round int) (float64, error) {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, b.o.load)
	for i := range b.o.load {
		wg.Go(func() {
			if _, err := s.audit(ctx, pageURL(p, fmt.Sprintf("%s-load%d", s.name, round), i)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(b.o.load) / time.Since(start).Minutes(), nil
}

// probeWhile audits the static page on s one at a time, 100 ms apart,
// until the returned stop is called, which returns the answers.
func probeWhile(ctx context.Context, s *server, tag string) (stop func() []answer) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan []answer)
	go func() {
		var as []answer
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				done <- as
				return
			case <-time.After(100 * time.Millisecond):
			}
			a, err := s.audit(ctx, pageURL(staticPage, tag, i))
			if err == nil {
				as = append(as, a)
			}
		}
	}()
	return func() []answer {
		cancel()
		return <-done
	}
}
