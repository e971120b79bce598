package server

import (
	"context"
	"net/http"
	"time"
)

// readyTimeout bounds all readiness checks together.
const readyTimeout = 2 * time.Second

// healthz answers 200 while the process serves HTTP.
func healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// readiness is the body of /readyz: the overall status and each check's.
type readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// readyz runs every check; any failure answers 503. Failure details go to
// the log, not to the response.
func (s *Server) readyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		res := readiness{Status: "ready", Checks: map[string]string{}}
		status := http.StatusOK
		for _, c := range s.cfg.Ready {
			if err := c.Func(ctx); err != nil {
				s.cfg.Logger.Warn("readiness check failed", "check", c.Name, "error", err)
				res.Checks[c.Name], res.Status, status = "failing", "not_ready", http.StatusServiceUnavailable
				continue
			}
			res.Checks[c.Name] = "ok"
		}
		if s.stopping.Load() {
			res.Status, status = "stopping", http.StatusServiceUnavailable
		}
		writeJSON(w, status, res)
	})
}
