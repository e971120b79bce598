package server

import "net/http"

// memberRoutes are the routes of members: the sites API, the member pages
// and the badges. They exist when Config.Members is set.
func (s *Server) memberRoutes(mux *http.ServeMux) {
	mux.Handle("POST /api/v1/sites", s.createSite())
	mux.Handle("GET /api/v1/sites", s.listSites())
	mux.Handle("GET /api/v1/sites/{id}", s.getSite())
	mux.Handle("PATCH /api/v1/sites/{id}", s.patchSite())
	mux.Handle("DELETE /api/v1/sites/{id}", s.deleteSite())
	mux.Handle("POST /api/v1/sites/{id}/audits", s.runNow())
	mux.Handle("GET /api/v1/sites/{id}/history", s.siteHistory())
	mux.Handle("GET /badge/{file}", s.badge())
	mux.Handle("POST /api/v1/members", s.joinAPI())
	s.memberPageRoutes(mux)
}
