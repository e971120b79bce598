package audit

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

// BenchmarkAuditRecords runs warm audits of the request-records page (a
// redirect, a stylesheet, a script fetching JSON) with records on (SQLite)
// and off, alternating in one run so both see the same machine, and
// reports each median and their ratio (on/off). A fresh URL per audit keeps
// the cache out of it.
func BenchmarkAuditRecords(b *testing.B) {
	db := openRecords(b, records.Config{DataDir: b.TempDir()})
	e := mustEnv(b, func(c *Config) { c.Requests = db })
	id := policy.DefaultIdentity()
	off, err := New(Config{Guard: e.guard, Renderer: browser, Store: e.store, Token: id.Token,
		PlainUA: id.PlainUA(), Timeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	run := func(a *Auditor) time.Duration {
		n++
		start := time.Now()
		r, err := a.Audit(context.Background(), Request{URL: fmt.Sprintf("http://shop.example/rec/go?n=%d", n), Trigger: TriggerCLI})
		if err != nil || r.Status != StatusComplete {
			b.Fatalf("audit: %v %v", err, r)
		}
		return time.Since(start)
	}
	run(e.auditor) // warm: browser contexts, connections, the database file
	run(off)
	var ons, offs []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			ons, offs = append(ons, run(e.auditor)), append(offs, run(off))
		} else {
			offs, ons = append(offs, run(off)), append(ons, run(e.auditor))
		}
	}
	b.StopTimer()
	mOn, mOff := median(ons), median(offs)
	b.ReportMetric(float64(mOn.Microseconds())/1000, "ms-on")
	b.ReportMetric(float64(mOff.Microseconds())/1000, "ms-off")
	b.ReportMetric(float64(mOn)/float64(mOff), "on/off")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkRecorderFlood audits a static page and a page that hunts for
// the write recorder and floods it (causes/recorder-forge.html), in turn,
// and reports the process's peak heap during each kind (sampled every
// millisecond) and their ratio (flood/static): a page cannot make this
// process hold more than its answer's bound.
func BenchmarkRecorderFlood(b *testing.B) {
	e := mustEnv(b, nil)
	n := 0
	peak := func(path string) uint64 {
		n++
		runtime.GC()
		var top atomic.Uint64
		done := make(chan struct{})
		go func() {
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapInuse > top.Load() {
					top.Store(m.HeapInuse)
				}
				select {
				case <-done:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		r, err := e.auditor.Audit(context.Background(), Request{URL: fmt.Sprintf("http://shop.example%s?n=%d", path, n), Trigger: TriggerCLI})
		close(done)
		if err != nil || r.Status != StatusComplete {
			b.Fatalf("audit %s: %v %v", path, err, r)
		}
		return top.Load()
	}
	peak("/delayed/static.html")
	var static, flood []uint64
	for i := 0; b.Loop(); i++ {
		static = append(static, peak("/delayed/static.html"))
		flood = append(flood, peak("/causes/recorder-forge.html"))
	}
	slices.Sort(static)
	slices.Sort(flood)
	s, f := static[len(static)-1], flood[len(flood)-1]
	b.ReportMetric(float64(s)/(1<<20), "static-peak-MB")
	b.ReportMetric(float64(f)/(1<<20), "flood-peak-MB")
	b.ReportMetric(float64(f)/float64(s), "flood/static")
}
