package server

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
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
	renderStage  *prometheus.HistogramVec
	refusals     *prometheus.CounterVec
	cacheHits    prometheus.Counter
	outbound     *prometheus.CounterVec
	submissions  *prometheus.CounterVec
	verifies     *prometheus.CounterVec
	apiWait      prometheus.Histogram
}

// Metric names, for docs/operators.md and the tests.
const (
	metricAudits       = "lekta_audits_total"
	metricLaneDuration = "lekta_lane_duration_seconds"
	metricRenderStage  = "lekta_render_stage_seconds"
	metricRefusals     = "lekta_limiter_refusals_total"
	metricCacheHits    = "lekta_cache_hits_total"
	metricQueueDepth   = "lekta_queue_depth"
	metricRunning      = "lekta_audits_running"
	metricContexts     = "lekta_browser_contexts_in_use"
	metricOutbound     = "lekta_outbound_requests_total"
	metricSubmissions  = "lekta_submissions_total"
	metricBuildInfo    = "lekta_build_info"
	metricVerifies     = "lekta_verifications_total"
	metricAPIWait      = "lekta_api_wait_seconds"
)

// Outcomes of a submission counted in lekta_submissions_total besides the
// refusals: queued for a new audit here.
const outcomeQueued = "queued"

// statusUnrecorded labels the render lane's subresource requests, whose
// answers the report does not keep one by one.
const statusUnrecorded = "unrecorded"

// buildInfo labels lekta_build_info: the module version, the Go release
// and the VCS revision when the binary was built with it.
func buildInfo() prometheus.Labels {
	l := prometheus.Labels{"version": "(devel)", "go_version": runtime.Version(), "revision": "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			l["version"] = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				l["revision"] = s.Value
			}
		}
	}
	return l
}

// depthTimeout bounds the queue read of one scrape.
const depthTimeout = time.Second

func newMetrics(s *Server, contexts func() int) *metrics {
	reg := prometheus.NewRegistry()
	m := &metrics{
		reg: reg,
		audits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricAudits,
			Help: "Audits this process ran, by trigger (form, api) and outcome (the audit's status: complete, partial, skipped, blocked, timeout, error; or failed when no report came back)."},
			[]string{"trigger", "outcome"}),
		submissions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricSubmissions,
			Help: "Every submission to the form or the API, invalid ones included, by trigger and outcome: queued, joined, cached, rate_limited, client_limited, queue_full, shutting_down, invalid_url, target_refused, bad_request, forbidden, unavailable, failed."},
			[]string{"trigger", "outcome"}),
		verifies: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricVerifies,
			Help: "Log lines site operators asked about (/bot/verify and POST /api/v1/verify), by answer: yes, no, unreadable, limited (the per-client limit), unavailable (the database did not answer), off (records are off)."},
			[]string{"answer"}),
		laneDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metricLaneDuration,
			Help:    "Wall time of each lane of the audits run by this process.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 75}},
			[]string{"lane"}),
		renderStage: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metricRenderStage,
			Help:    "Wall time of each stage of the renders run by this process (the report's lanes.render.timing): context (waiting for a browser context), navigate (until the document committed), document_request and load (points of the navigation, from its start), settle (waiting for the page's work), snapshot.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 75}},
			[]string{"stage"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricRefusals,
			Help: "Submissions refused by a limit, by reason: concurrency or a per-host window such as 1/1m, or client for the per-client limit."},
			[]string{"reason"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{Name: metricCacheHits,
			Help: "Submissions answered from the result cache without contacting the site."}),
		outbound: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricOutbound,
			Help: "Every request made to audited sites, by lane (robots: each robots.txt request, redirects included; plain: each hop of the plain GET; render: every request of the browser, subresources included) and HTTP status class (2xx..5xx; none when no answer arrived; unrecorded for the render lane's subresources, whose answers the report does not keep one by one)."},
			[]string{"lane", "status"}),
		apiWait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: metricAPIWait,
			Help:    "For each ?wait= (and each following report page) answered with a report: from the report's end (its start plus duration_ms), or from the question when the report was older, to the answer. The time a waiting client loses between the audit and its answer.",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}}),
	}
	reg.MustRegister(m.audits, m.laneDuration, m.renderStage, m.refusals, m.cacheHits, m.outbound, m.submissions, m.verifies, m.apiWait)
	reg.MustRegister(s.gauges(contexts)...)
	return m
}

// gauges are the metrics read at each scrape: the build, the queue's
// depth, what runs here, and the Go runtime's and the process's own.
func (s *Server) gauges(contexts func() int) []prometheus.Collector {
	if contexts == nil {
		contexts = s.Running
	}
	depth := func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), depthTimeout)
		defer cancel()
		n, err := s.cfg.Queue.Depth(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: metricBuildInfo,
		Help: "Always 1; the labels say which build is running.", ConstLabels: buildInfo()})
	build.Set(1)
	return []prometheus.Collector{build,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricQueueDepth,
			Help: "Public audits waiting to start in the shared queue, every instance's together (-1 when the queue did not answer)."}, depth),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricRunning,
			Help: "Audits running in this process."}, func() float64 { return float64(s.Running()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricContexts,
			Help: "Browser contexts in use (or audits running, where the browser does not say)."},
			func() float64 { return float64(contexts()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// observe records the lane timings and the outbound requests of an audit
// that ran in this process: every robots.txt request, every hop of the
// plain GET, and every request of the render.
func (m *metrics) observe(r *audit.Report) {
	if r.Robots != nil && r.Robots.Outcome != "" {
		for i := range max(r.Robots.Requests, 1) {
			st := 0
			if i == max(r.Robots.Requests, 1)-1 {
				st = r.Robots.HTTPStatus
			} else {
				st = 300 // a redirect hop
			}
			m.outbound.WithLabelValues("robots", statusClass(st)).Inc()
		}
	}
	for _, l := range []struct {
		name string
		lr   *audit.LaneReport
	}{{"plain", &r.Lanes.Plain}, {"render", &r.Lanes.Render.LaneReport}} {
		switch l.lr.Outcome {
		case "", audit.OutcomeSkipped, audit.OutcomeBlocked:
			continue // no request reached the site
		}
		m.laneDuration.WithLabelValues(l.name).Observe(
			(time.Duration(l.lr.DurationMS) * time.Millisecond).Seconds())
		for _, h := range l.lr.Redirects {
			m.outbound.WithLabelValues(l.name, statusClass(h.Status)).Inc()
		}
		m.outbound.WithLabelValues(l.name, statusClass(l.lr.HTTPStatus)).Inc()
	}
	rl := r.Lanes.Render
	if rl.Outcome == "" || rl.Outcome == audit.OutcomeSkipped || rl.Outcome == audit.OutcomeBlocked {
		return
	}
	if t := rl.Timing; t != nil {
		// document_request and load are points that may not come (0):
		// those are not counted.
		for _, st := range []struct {
			name  string
			ms    int64
			point bool
		}{{"context", t.ContextMS, false}, {"navigate", t.NavigateMS, false}, {"document_request", t.DocumentRequestMS, true},
			{"load", t.LoadMS, true}, {"settle", t.SettleMS, false}, {"snapshot", t.SnapshotMS, false}} {
			if !st.point || st.ms > 0 {
				m.renderStage.WithLabelValues(st.name).Observe((time.Duration(st.ms) * time.Millisecond).Seconds())
			}
		}
	}
	// The page and its redirect hops are counted above; the browser's
	// other requests are its subresources, the failed ones among them
	// without an answer.
	others := rl.Requests - 1 - len(rl.Redirects)
	failed := min(len(rl.FailedRequests), max(others, 0))
	if failed > 0 {
		m.outbound.WithLabelValues("render", "none").Add(float64(failed))
	}
	if n := others - failed; n > 0 {
		m.outbound.WithLabelValues("render", statusUnrecorded).Add(float64(n))
	}
}

// statusClass is "2xx" for 200..299 and so on, "none" without a response.
func statusClass(code int) string {
	if code < 100 || code > 599 {
		return "none"
	}
	return fmt.Sprintf("%dxx", code/100)
}
