package server

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
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
	Position int   `json:"position,omitempty"`
	Links    links `json:"links"`
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
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
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
	writeJSON(w, e.Status, errorBody{errorDetail{Code: e.Code, Message: e.Message, RetryAfterS: e.retryAfterSeconds()}})
}

// writeReport writes a finished report: 200, noindex, never cached by proxies.
func writeReport(w http.ResponseWriter, r *audit.Report) {
	b, err := json.Marshal(r)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
}

func (s *Server) writePending(w http.ResponseWriter, r *run, joined bool) {
	state, _ := r.state()
	if state == "done" {
		state = "running" // finished this instant; the next poll has the report
	}
	p := pending{ID: r.id, Status: state, URL: r.url, Joined: joined, Step: string(s.stepOf(r)), Links: linksFor(r.id)}
	if state == "queued" {
		p.Position = r.position
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
			s.writePending(w, sub.run, sub.joined)
		}
	})
}

// readURL reads {"url": "..."}; errors are bad_request.
func readURL(w http.ResponseWriter, r *http.Request) (string, error) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return "", badRequest(`send a JSON body {"url": "…"} with Content-Type: application/json`)
	}
	var body struct {
		URL *string `json:"url"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAPIBody))
	if err := dec.Decode(&body); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return "", badRequest("the body is larger than 64 KiB")
		}
		return "", badRequest("the body is not valid JSON: " + err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", badRequest("the body must be one JSON object")
	}
	if body.URL == nil || strings.TrimSpace(*body.URL) == "" {
		return "", badRequest(`the body has no "url"`)
	}
	return *body.URL, nil
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
		rep, running, err := s.lookup(r, id)
		if running != nil && wait > 0 {
			rep, running, err = s.await(r, id, running, wait)
		}
		switch {
		case running != nil:
			s.writePending(w, running, false)
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
			return 0, badRequest(`wait must be a duration such as "30s"`)
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 {
		return 0, badRequest("wait must not be negative")
	}
	return min(d, s.cfg.MaxWait), nil
}

// followPoll is how often a ?wait= on an audit another instance runs reads
// the shared store for its report.
const followPoll = 200 * time.Millisecond

// await waits up to wait for the audit id to end: on the run's own end when
// it runs here, else by reading the shared store until its report exists.
func (s *Server) await(r *http.Request, id string, running *run, wait time.Duration) (*audit.Report, *run, error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	var tick <-chan time.Time
	if running.seen != nil {
		tk := time.NewTicker(followPoll)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case <-running.done:
		case <-tick:
			rep, again, err := s.lookup(r, id)
			if again != nil && again.seen != nil {
				running = again
				continue
			}
			return rep, again, err
		case <-t.C:
		case <-r.Context().Done():
		case <-s.pool.stopping():
		}
		return s.lookup(r, id)
	}
}

// lookup finds id: a run of this process still going (running), a run
// that finished here, a stored report, or an audit queued or running on
// another instance (running, from its progress entry). The progress entry
// is read before the report, and an audit's report is stored before its
// entry is dropped, so an audit that ends meanwhile is never missed.
func (s *Server) lookup(r *http.Request, id string) (*audit.Report, *run, error) {
	if !validID(id) {
		return nil, nil, notFound()
	}
	if run := s.pool.lookup(id); run != nil {
		select {
		case <-run.done:
			if rep, err := run.result(); rep != nil {
				return rep, nil, nil
			} else if err != nil && !errors.Is(err, audit.ErrNotFound) {
				return nil, nil, err
			}
		default:
			return nil, run, nil
		}
	}
	p, found, perr := s.cfg.Auditor.Progress(r.Context(), id)
	rep, err := s.cfg.Auditor.Report(r.Context(), id)
	switch {
	case err == nil:
		return rep, nil, nil
	case perr == nil && found && errors.Is(err, audit.ErrNotFound):
		return nil, s.seenRun(p), nil
	}
	return rep, nil, err
}

// seenRun is a view of an audit another instance queued or runs.
func (s *Server) seenRun(p cache.Progress) *run {
	r := &run{id: p.ID, url: p.URL, seen: &p, position: p.Position, done: make(chan struct{})}
	if p.Status == cache.ProgressRunning {
		r.started = p.UpdatedAt
	} else {
		r.queued = p.UpdatedAt
	}
	return r
}

// stepOf is the step r is at: from this process's watcher, or from the
// progress entry of an audit another instance runs.
func (s *Server) stepOf(r *run) audit.Step {
	if r.seen != nil {
		return audit.Step(r.seen.Step)
	}
	return s.steps.at(r.id)
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
