package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/escape"
	"lekta.dev/lekta/policy"
)

// maxAPIBody caps the JSON body of POST /api/v1/audits.
const maxAPIBody = 64 << 10

// pending is the API's answer while an audit is queued or running: 202.
type pending struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	URL    string `json:"url"`
	// Joined: this submission joined the audit of the same URL that was
	// already running; its report is that audit's.
	Joined bool `json:"joined,omitempty"`
	// Step is the step running ("robots", "plain", "render", "compare").
	Step string `json:"step,omitempty"`
	// Position is the place in the queue when it was queued (1 is next).
	Position int `json:"position,omitempty"`
	// StartsAt is when a queued audit is due to start: the start its
	// host's limits reserved for it.
	StartsAt *audit.Timestamp `json:"starts_at,omitempty"`
	// Note says in words why a queued audit is overdue: the instance that
	// queued it has not started it (Redis without PostgreSQL, where only
	// it can).
	Note  string `json:"note,omitempty"`
	Links links  `json:"links"`
}

// links point at an audit's JSON and its page.
type links struct {
	Self   string `json:"self"`
	Report string `json:"report"`
}

func linksFor(id string) links {
	return links{Self: "/api/v1/audits/" + id, Report: "/r/" + id}
}

// errorBody is the API's error JSON.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code        string `json:"code"`
	Message     string `json:"message"`
	RetryAfterS int64  `json:"retry_after_s,omitempty"`
	// SiteID is the member's saved site an already_saved conflict is about.
	SiteID string `json:"site_id,omitempty"`
}

// writeJSON writes v with status, every control and bidi character in
// its strings escaped (escape.JSON).
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := escape.JSON(v, "")
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"encoding failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeError writes err as the API's error JSON, with Retry-After when set.
func writeError(w http.ResponseWriter, err error) {
	e := errorFor(err)
	e.setRetryAfter(w.Header())
	writeJSON(w, e.Status, errorBody{errorDetail{Code: e.Code, Message: e.Message, RetryAfterS: e.retryAfterSeconds(), SiteID: e.SiteID}})
}

// writeReport writes a finished report: 200, noindex, never cached by proxies.
func writeReport(w http.ResponseWriter, r *audit.Report) {
	b, err := escape.JSON(r, "")
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
}

func (s *Server) writePending(w http.ResponseWriter, st *status) {
	p := pending{ID: st.id, Status: st.state, URL: st.url, Joined: st.joined, Step: st.step, Note: st.note, Links: linksFor(st.id)}
	if st.state == cache.ProgressQueued {
		p.Position = st.position
		if !st.startsAt.IsZero() {
			at := audit.At(st.startsAt)
			p.StartsAt = &at
		}
	}
	writeJSON(w, http.StatusAccepted, p)
}

// createAudit is POST /api/v1/audits.
func (s *Server) createAudit() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Robots-Tag", "noindex, nofollow")
		w.Header().Set("Cache-Control", "no-store")
		raw, err := readURL(w, r)
		if err != nil {
			s.countInvalid(audit.TriggerAPI, err)
			writeError(w, err)
			return
		}
		sub, err := s.submit(r.Context(), raw, audit.TriggerAPI, clientAddr(r, s.cfg.TrustedProxies))
		switch {
		case err != nil:
			if e := errorFor(err); e.Code == codeInternal {
				s.cfg.Logger.Error("api submission", "error", err)
			}
			writeError(w, err)
		case sub.ready != nil:
			writeReport(w, sub.ready)
		default:
			w.Header().Set("Location", "/api/v1/audits/"+sub.id)
			s.writePending(w, sub.status())
		}
	})
}

// auditBody is the body of POST /api/v1/audits.
var auditBody = jsonBody{limit: maxAPIBody, shape: "a url field"}

// readURL reads {"url": "..."}, an address without a scheme taken as
// https:// (policy.WithDefaultScheme, as the form and the CLI take it);
// errors are bad_request or too_large.
func readURL(w http.ResponseWriter, r *http.Request) (string, error) {
	var body struct {
		URL *string `json:"url"`
	}
	if err := readJSON(w, r, auditBody, &body); err != nil {
		return "", err
	}
	if body.URL == nil || strings.TrimSpace(*body.URL) == "" {
		return "", badRequest("The body has no url; send a JSON object with a url field.")
	}
	return policy.WithDefaultScheme(*body.URL), nil
}

// getAudit is GET /api/v1/audits/{id}[?wait=30s].
func (s *Server) getAudit() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Robots-Tag", "noindex, nofollow")
		w.Header().Set("Cache-Control", "no-store")
		wait, err := s.parseWait(r.URL.Query().Get("wait"))
		if err != nil {
			writeError(w, err)
			return
		}
		id := r.PathValue("id")
		rep, running, err := s.await(r.Context(), id, wait)
		switch {
		case running != nil:
			s.writePending(w, running)
		case err != nil:
			writeError(w, err)
		default:
			writeReport(w, rep)
		}
	})
}

// parseWait reads ?wait= as a Go duration ("30s") or whole seconds ("30"),
// capped at MaxWait.
func (s *Server) parseWait(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil {
			return 0, badRequest("The wait parameter must be a duration such as 30s, or a number of seconds.")
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 {
		return 0, badRequest("The wait parameter must not be negative.")
	}
	return min(d, s.cfg.MaxWait), nil
}

// DefaultWaitFallback is how often a waiter reads the store when no news
// came: news is what wakes it (Config.Wake), this only bounds what a lost
// message costs.
const DefaultWaitFallback = time.Second

// await looks id up at once and, while it is queued or running, waits up
// to wait for its report: it reads the store again when the report's news
// comes (Config.Wake), or every WaitFallback in case news was lost. While
// this instance shuts down it keeps waiting until its queue has stopped:
// the audits it runs end (finished or cancelled) within the grace period,
// their reports stored; then it answers with the audit's state at once, a
// report or a 202.
func (s *Server) await(ctx context.Context, id string, wait time.Duration) (*audit.Report, *status, error) {
	if wait <= 0 {
		return s.lookup(ctx, id)
	}
	asked := s.cfg.Now()
	t := time.NewTimer(wait)
	defer t.Stop()
	fallback := time.NewTicker(s.cfg.WaitFallback)
	defer fallback.Stop()
	for {
		// Watched before the read, so news between the two still wakes it.
		news, stop := s.cfg.Wake.Watch(id)
		rep, again, err := s.lookup(ctx, id)
		if again == nil || wait <= 0 {
			stop()
			s.waited(rep, asked)
			return rep, again, err
		}
		select {
		case <-news:
			continue
		case <-fallback.C:
			stop()
			continue
		case <-t.C:
		case <-ctx.Done():
		case <-s.drained:
			// Shutting down: answer with the state the audit is left in
			// (queued audits stay queued for another instance), never a
			// connection closed without an answer.
		}
		stop()
		wait = 0 // one last read, then the answer
	}
}

// waited observes, for a ?wait= answered with a report, how long after
// the report's end (or the question, when the report was older) the
// answer came: lekta_api_wait_seconds.
func (s *Server) waited(rep *audit.Report, asked time.Time) {
	if rep == nil {
		return
	}
	from := asked
	if end := rep.StartedAt.Add(time.Duration(rep.DurationMS) * time.Millisecond); !rep.StartedAt.IsZero() && end.After(from) {
		from = end
	}
	s.metrics.apiWait.Observe(max(s.cfg.Now().Sub(from), 0).Seconds())
}

// status is where an audit not yet reported stands, as any instance
// recorded it.
type status struct {
	id, url string
	// state is "queued" or "running".
	state    string
	step     string
	position int
	startsAt time.Time
	// since is when it was queued or started, as far as known.
	since  time.Time
	joined bool
	// note says why a queued audit is overdue (pending.Note).
	note string
}

// status is the submission's 202 view.
func (sub submission) status() *status {
	st := &status{id: sub.id, url: sub.url, state: cache.ProgressQueued, position: sub.position, startsAt: sub.startsAt, joined: sub.joined}
	if sub.joined {
		st.state = cache.ProgressRunning
	}
	return st
}

// lookup finds id: a stored report, or an audit queued or running on any
// instance, from its progress entry or, when that has gone (its instance
// stopped before River rescued the job), from the queue itself. The
// progress entry is read before the report, and an audit's report is
// stored before its entry is dropped, so an audit that ends meanwhile is
// never missed.
func (s *Server) lookup(ctx context.Context, id string) (*audit.Report, *status, error) {
	if !validID(id) {
		return nil, nil, notFound()
	}
	p, found, perr := s.cfg.Auditor.Progress(ctx, id)
	rep, err := s.cfg.Auditor.Report(ctx, id)
	switch {
	case err == nil:
		return rep, nil, nil
	case !errors.Is(err, audit.ErrNotFound):
		return nil, nil, readRefusal(err)
	case perr == nil && found:
		st := &status{id: id, url: p.URL, state: p.Status, step: p.Step, position: p.Position, startsAt: p.StartsAt, since: p.UpdatedAt}
		st.note = s.overdue(p)
		return nil, st, nil
	}
	w, ok, ferr := s.cfg.Queue.Find(ctx, id)
	switch {
	case ferr != nil:
		s.cfg.Logger.Warn("find a queued audit", "id", id, "error", ferr)
		return nil, nil, readRefusal(ferr)
	case !ok:
		return nil, nil, err
	}
	st := &status{id: id, url: w.URL, state: cache.ProgressQueued, startsAt: w.StartsAt}
	if w.Running {
		st.state, st.startsAt = cache.ProgressRunning, time.Time{}
	}
	return nil, st, nil
}

// validID accepts the shape of report ids (base32 from audit.NewID, or
// similar): 16 to 64 letters, digits, '-' and '_'.
func validID(id string) bool {
	if len(id) < 16 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
