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
	Joined bool  `json:"joined,omitempty"`
	Links  links `json:"links"`
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

func writePending(w http.ResponseWriter, r *run, joined bool) {
	state, _ := r.state()
	if state == "done" {
		state = "running" // finished this instant; the next poll has the report
	}
	writeJSON(w, http.StatusAccepted, pending{ID: r.id, Status: state, URL: r.url, Joined: joined, Links: linksFor(r.id)})
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
			writePending(w, sub.run, sub.joined)
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
			t := time.NewTimer(wait)
			select {
			case <-running.done:
			case <-t.C:
			case <-r.Context().Done():
			case <-s.pool.stopping():
			}
			t.Stop()
			rep, running, err = s.lookup(r, id)
		}
		switch {
		case running != nil:
			writePending(w, running, false)
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

// lookup finds id: a run of this process still going (running), a run
// that finished here, or a stored report.
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
	rep, err := s.cfg.Auditor.Report(r.Context(), id)
	return rep, nil, err
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
