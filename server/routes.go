package server

import "net/http"

// routes is every route of the server; New wraps it in the security headers.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", formPage(s.pages, s.cfg.Policy.Limits.CacheTTL))
	mux.Handle("POST /audits", s.submitForm())
	mux.Handle("GET /r/{id}", s.reportPage())
	mux.Handle("GET /bot", s.botPolicy)
	mux.Handle("GET /bot/verify", s.verifyPage())
	mux.Handle("POST /bot/verify", s.verifyPage())
	mux.Handle("GET /static/style.css", staticFile("web/style.css", "text/css; charset=utf-8"))

	mux.Handle("POST /api/v1/audits", s.createAudit())
	mux.Handle("GET /api/v1/audits/{id}", s.getAudit())
	mux.Handle("POST /api/v1/verify", s.verifyAPI())
	mux.Handle("GET /api/v1/openapi.json", staticFile("web/openapi.json", "application/json"))
	mux.Handle("GET /api", s.apiReference)

	if s.cfg.Members != nil {
		s.memberRoutes(mux)
	}

	mux.Handle("GET /healthz", healthz())
	mux.Handle("GET /readyz", s.readyz())
	mux.Handle("GET /metrics", s.metrics.handler())

	mux.Handle("/", notFoundPage(s.pages, "No such page", "There is nothing at this address."))
	return mux
}
