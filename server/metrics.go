package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"lekta.dev/lekta/audit"
)

// reasonClient is the refusal reason of the per-client limit; the per-host
// limiter's reasons are "concurrency" and windows such as "1/1m".
const reasonClient = "client"

// metrics are the server's Prometheus metrics, on a registry of its own.
type metrics struct {
	reg          *prometheus.Registry
	audits       *prometheus.CounterVec
	laneDuration *prometheus.HistogramVec
	refusals     *prometheus.CounterVec
	cacheHits    prometheus.Counter
	outbound     *prometheus.CounterVec
}

// Metric names, for the README and the tests.
const (
	metricAudits       = "lekta_audits_total"
	metricLaneDuration = "lekta_lane_duration_seconds"
	metricRefusals     = "lekta_limiter_refusals_total"
	metricCacheHits    = "lekta_cache_hits_total"
	metricQueueDepth   = "lekta_queue_depth"
	metricRunning      = "lekta_audits_running"
	metricContexts     = "lekta_browser_contexts_in_use"
	metricOutbound     = "lekta_outbound_requests_total"
)

func newMetrics(p *pool, contexts func() int) *metrics {
	reg := prometheus.NewRegistry()
	m := &metrics{
		reg: reg,
		audits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricAudits,
			Help: "Submitted audits by trigger (form, api) and outcome (an audit status, or cached, joined, rate_limited, client_limited, queue_full, invalid_url, target_refused, unavailable, failed)."},
			[]string{"trigger", "outcome"}),
		laneDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metricLaneDuration,
			Help:    "Wall time of each lane of the audits run by this process.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 75}},
			[]string{"lane"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricRefusals,
			Help: "Submissions refused by a limit, by reason: concurrency or a per-host window such as 1/1m, or client for the per-client limit."},
			[]string{"reason"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{Name: metricCacheHits,
			Help: "Submissions answered from the result cache without contacting the site."}),
		outbound: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricOutbound,
			Help: "Requests to audited sites by lane (robots, plain, render: the page request of each lane) and HTTP status class (2xx..5xx, or none when no response arrived)."},
			[]string{"lane", "status"}),
	}
	if contexts == nil {
		contexts = p.busy
	}
	reg.MustRegister(m.audits, m.laneDuration, m.refusals, m.cacheHits, m.outbound,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricQueueDepth,
			Help: "Admitted audits waiting for a renderer."}, func() float64 { return float64(p.depth()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricRunning,
			Help: "Audits running or joined in this process."}, func() float64 { return float64(p.busy()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricContexts,
			Help: "Browser contexts in use (or audits running, where the browser does not say)."},
			func() float64 { return float64(contexts()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// observe records the lane timings and outbound requests of an audit that
// ran in this process.
func (m *metrics) observe(r *audit.Report) {
	if r.Robots != nil && r.Robots.Outcome != "" {
		m.outbound.WithLabelValues("robots", statusClass(r.Robots.HTTPStatus)).Inc()
	}
	for _, l := range []struct {
		name string
		lr   *audit.LaneReport
	}{{"plain", &r.Lanes.Plain}, {"render", &r.Lanes.Render.LaneReport}} {
		switch l.lr.Outcome {
		case "", audit.OutcomeSkipped, audit.OutcomeBlocked:
			continue // no request reached the site
		}
		m.outbound.WithLabelValues(l.name, statusClass(l.lr.HTTPStatus)).Inc()
		m.laneDuration.WithLabelValues(l.name).Observe(
			(time.Duration(l.lr.DurationMS) * time.Millisecond).Seconds())
	}
}

// statusClass is "2xx" for 200..299 and so on, "none" without a response.
func statusClass(code int) string {
	if code < 100 || code > 599 {
		return "none"
	}
	return fmt.Sprintf("%dxx", code/100)
}
