package audit

import (
	"maps"
	"net/http"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/plainget"
)

// conditional is a request's conditional re-fetch of the plain lane: the
// validators to send and the previous plain lane a 304 answer reuses.
type conditional struct {
	validators plainget.Validators
	previous   *LaneReport
}

// reuse turns a 304 answer into the previous plain lane: the report keeps
// the 304 and says not_modified, while the diff sees the previous status,
// media type and headers (a 304 is not a status difference) and the
// previous extract, which holds derived fields only.
func (c conditional) reuse(snap *compare.Snapshot, lr *LaneReport) *compare.Observed {
	prev := c.previous
	lr.NotModified = true
	lr.ContentType, lr.FinalURL = prev.ContentType, prev.FinalURL
	// The 304's own headers update the previous ones (RFC 9111, 4.3.4).
	h := compare.Header{}
	maps.Copy(h, prev.Headers)
	maps.Copy(h, lr.Headers)
	lr.Headers = reported(h)
	status := prev.HTTPStatus
	if prev.NotModified {
		// The previous one reused an earlier 200 (only a 200 is revalidated).
		status = http.StatusOK
	}
	seen := *snap
	seen.Status, seen.ContentType, seen.FinalURL, seen.Header = status, prev.ContentType, prev.FinalURL, h
	seen.Body = nil
	var page *compare.Page
	if prev.Page != nil {
		p := *prev.Page
		page = &p
	}
	return &compare.Observed{Snapshot: &seen, Page: page}
}
