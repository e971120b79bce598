package audit

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"lekta.dev/lekta/compare"
)

// TestNotModifiedReuse: a 304 reuses the previous plain lane for the diff
// (its status and media type, so no false status difference), keeps 304 in
// the report with not_modified, and the text report says the previous
// extract was reused.
func TestNotModifiedReuse(t *testing.T) {
	prev := &LaneReport{Outcome: OutcomeOK, HTTPStatus: 200, ContentType: "text/html", FinalURL: "http://shop.example/kettle.html",
		Headers: compare.Header{"Etag": {`"kettle-v1"`}, "Content-Type": {"text/html; charset=utf-8"}},
		Page:    &compare.Page{Title: "The copper kettle", WordCount: 30}}
	snap := &compare.Snapshot{Lane: compare.LanePlain, Status: http.StatusNotModified, FinalURL: prev.FinalURL,
		Header: compare.Header{"Etag": {`"kettle-v1"`}, "Cache-Control": {"no-cache"}}}
	var lr LaneReport
	fillLane(t.Context(), &lr, snap, nil, 0)
	obs := conditional{previous: prev}.reuse(snap, &lr)
	if !lr.NotModified || lr.HTTPStatus != 304 || lr.ContentType != "text/html" {
		t.Fatalf("lane report not_modified %v, http_status %d, content_type %q", lr.NotModified, lr.HTTPStatus, lr.ContentType)
	}
	if got := lr.Headers.Values("Content-Type"); len(got) != 1 || lr.Headers.Values("Cache-Control")[0] != "no-cache" {
		t.Fatalf("headers %v: want the previous ones updated by the 304's", lr.Headers)
	}
	if obs.Snapshot.Status != 200 || obs.Snapshot.ContentType != "text/html" || obs.Page.Title != prev.Page.Title || obs.Page == prev.Page {
		t.Fatalf("observed %+v page %+v: want the previous status, media type and a copy of its extract", obs.Snapshot, obs.Page)
	}
	chained := conditional{previous: &lr}.reuse(snap, &LaneReport{HTTPStatus: 304})
	if chained.Snapshot.Status != 200 {
		t.Fatalf("a 304 after a reused 304 is diffed as %d, want 200", chained.Snapshot.Status)
	}
	res := compare.Diff(obs, &compare.Observed{Snapshot: &compare.Snapshot{Lane: compare.LaneRender, Status: 200, ContentType: "text/html",
		FinalURL: prev.FinalURL}, Page: &compare.Page{Title: "The copper kettle", WordCount: 30}})
	for _, d := range res.Diff {
		if d.Field == "status" && d.Change != compare.ChangeSame {
			t.Fatalf("false status difference: %+v", d)
		}
	}
	r := &Report{Schema: Schema, Status: StatusComplete, Lanes: Lanes{Plain: lr}}
	r.fillEmpty()
	var buf bytes.Buffer
	if err := WriteText(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "not modified (304): the previous extract was reused") {
		t.Fatalf("text report does not say the previous extract was reused:\n%s", buf.String())
	}
}

// TestNotModifiedMatchesOpenAPI: a report whose plain lane was not
// modified matches openapi.json (not_modified is documented).
func TestNotModifiedMatchesOpenAPI(t *testing.T) {
	for name, b := range goldenReports(t) {
		r, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r.Lanes.Plain.NotModified, r.Lanes.Plain.HTTPStatus = true, http.StatusNotModified
		out, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(out, []byte(`"not_modified": true`)) {
			t.Fatalf("%s: not_modified not encoded", name)
		}
		if err := validateReport(t, out); err != nil {
			t.Fatalf("%s with not_modified does not match openapi.json: %v", name, err)
		}
		return // one report is enough
	}
}
