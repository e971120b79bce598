package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"lekta.dev/lekta/internal/apischema"
	"lekta.dev/lekta/schedule"
)

// spec is the embedded OpenAPI document, decoded generically.
type spec map[string]any

func loadSpec(tb testing.TB) spec {
	tb.Helper()
	return spec(loadDoc(tb).Raw)
}

// loadDoc loads the embedded OpenAPI document for validation.
func loadDoc(tb testing.TB) *apischema.Doc {
	tb.Helper()
	b, err := webFS.ReadFile("web/openapi.json")
	if err != nil {
		tb.Fatal(err)
	}
	return apischema.Load(tb, b)
}

// obj is a JSON object or nil.
func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// route finds the spec path template matching a concrete path.
func (s spec) route(path string) (string, map[string]any) {
	path, _, _ = strings.Cut(path, "?")
	for tmpl, item := range obj(s["paths"]) {
		a, b := strings.Split(tmpl, "/"), strings.Split(path, "/")
		if len(a) != len(b) {
			continue
		}
		ok := true
		for i := range a {
			if !strings.HasPrefix(a[i], "{") && a[i] != b[i] {
				ok = false
				break
			}
		}
		if ok {
			return tmpl, obj(item)
		}
	}
	return "", nil
}

// checkSpec checks every recorded exchange with a documented path: the
// method and status are documented, documented Retry-After headers are
// present, and the body is valid against the response's schema by a real
// JSON Schema 2020-12 validator.
func (h *harness) checkSpec(t testing.TB) {
	t.Helper()
	doc := loadDoc(t)
	s := spec(doc.Raw)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ex := range h.exchange {
		tmpl, item := s.route(ex.path)
		if item == nil {
			continue // a page for people, not part of the API
		}
		method := strings.ToLower(ex.method)
		if obj(item[method]) == nil {
			t.Errorf("%s %s: method not documented under %s", ex.method, ex.path, tmpl)
			continue
		}
		status := strconv.Itoa(ex.status)
		resp := doc.Response(tmpl, method, status)
		if resp == nil {
			t.Errorf("%s %s: status %d not documented", ex.method, tmpl, ex.status)
			continue
		}
		for name := range obj(resp["headers"]) {
			if name == "Retry-After" && ex.header.Get(name) == "" {
				t.Errorf("%s %s %d: documented header %s missing", ex.method, tmpl, ex.status, name)
			}
		}
		ct, _, _ := strings.Cut(ex.header.Get("Content-Type"), ";")
		if obj(obj(resp["content"])[ct]) == nil {
			t.Errorf("%s %s %d: content type %q not documented", ex.method, tmpl, ex.status, ct)
			continue
		}
		if ct != "application/json" {
			continue
		}
		ptr := doc.ResponseSchema(tmpl, method, status, ct)
		if err := doc.Validate(t, ptr, ex.body); err != nil {
			t.Errorf("%s %s %d: the body does not match %s: %v", ex.method, tmpl, ex.status, ptr, err)
		}
		if bytes.Contains(ex.body, []byte(":null")) && !strings.Contains(tmpl, "openapi") {
			checkNoNullLists(t, ex.method+" "+tmpl, ex.body)
		}
	}
}

// checkNoNullLists fails when a JSON document has null where the schema
// allows only a list: the validator says so too, this names the place.
func checkNoNullLists(t testing.TB, what string, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if e == nil && k != "page" && k != "plain" && k != "render" {
					t.Errorf("%s: %s.%s is null", what, at, k)
				}
				walk(e, at+"."+k)
			}
		case []any:
			for i, e := range x {
				walk(e, at+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	walk(v, "body")
}

// TestOpenAPIRoutes checks that every documented path and method is a
// route of the server (not the catch-all), and that the spec is served.
func TestOpenAPIRoutes(t *testing.T) {
	h := newHarness(t)
	s := loadSpec(t)
	mux := h.srv.mux
	for path, item := range obj(s["paths"]) {
		for method := range obj(item) {
			if strings.HasPrefix(path, "/api/v1/sites") || path == "/api/v1/members" {
				continue // served with members only: TestOpenAPIMemberRoutes
			}
			concrete := strings.ReplaceAll(path, "{id}", "AAAAAAAAAAAAAAAAAAAAAAAAAA")
			req := httptest.NewRequest(strings.ToUpper(method), concrete, nil)
			if _, pattern := mux.Handler(req); pattern == "" || pattern == "/" {
				t.Errorf("%s %s is documented but no route serves it (pattern %q)", method, path, pattern)
			}
		}
	}
	resp, b := h.do("GET", "/api/v1/openapi.json", "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	if got := decode[map[string]any](t, b); got["openapi"] != "3.1.0" {
		t.Errorf("served spec: openapi %v", got["openapi"])
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, b := h.do("GET", p, "", nil)
		wantStatus(t, resp, b, http.StatusOK)
	}
	h.checkSpec(t)
}

// TestOpenAPIMemberRoutes checks the member routes the document names.
func TestOpenAPIMemberRoutes(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	n := 0
	for path, item := range obj(loadSpec(t)["paths"]) {
		for method := range obj(item) {
			if !strings.HasPrefix(path, "/api/v1/sites") && path != "/api/v1/members" {
				continue
			}
			n++
			req := httptest.NewRequest(strings.ToUpper(method), strings.ReplaceAll(path, "{id}", "s_x"), nil)
			if _, pattern := h.srv.mux.Handler(req); pattern == "" || pattern == "/" {
				t.Errorf("%s %s is documented but no route serves it", method, path)
			}
		}
	}
	if n != 8 {
		t.Errorf("%d member operations documented, want 8", n)
	}
}

// TestOpenAPIDocumentsEveryAPIStatus provokes nothing itself; it checks
// that the statuses the spec documents for the audit endpoints are the
// ones the handlers can produce, so the spec lists no dead answers.
func TestOpenAPIDocumentsEveryAPIStatus(t *testing.T) {
	s := loadSpec(t)
	want := map[string][]string{
		"post /api/v1/audits":     {"200", "202", "400", "403", "413", "429", "503"},
		"get /api/v1/audits/{id}": {"200", "202", "400", "404", "503"},
	}
	for key, statuses := range want {
		method, path, _ := strings.Cut(key, " ")
		op := obj(obj(obj(s["paths"])[path])[method])
		var got []string
		for st := range obj(op["responses"]) {
			got = append(got, st)
		}
		slices.Sort(got)
		if !slices.Equal(got, statuses) {
			t.Errorf("%s documents %v, the handlers answer %v", key, got, statuses)
		}
	}
}

// TestOpenAPIValidatorCatches makes sure the validation above can fail: a
// report with findings null, an undocumented field or a page of the wrong
// shape does not pass.
func TestOpenAPIValidatorCatches(t *testing.T) {
	h := newHarness(t)
	resp, b := h.post("http://shop.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	rep := h.waitReport(decode[pending](t, b).ID)
	good, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	doc := loadDoc(t)
	const report = "/components/schemas/Report"
	if err := doc.Validate(t, report, good); err != nil {
		t.Fatalf("a real report does not validate: %v", err)
	}
	for name, mutate := range map[string]func(m map[string]any){
		"findings null":       func(m map[string]any) { m["findings"] = nil },
		"undocumented field":  func(m map[string]any) { m["surprise"] = 1 },
		"page title a number": func(m map[string]any) { obj(obj(obj(m["lanes"])["plain"])["page"])["title"] = 3 },
		"redirect without url": func(m map[string]any) {
			obj(obj(m["lanes"])["plain"])["redirects"] = []any{map[string]any{"status": 301, "location": "/x"}}
		},
	} {
		var m map[string]any
		json.Unmarshal(good, &m)
		mutate(m)
		bad, _ := json.Marshal(m)
		if err := doc.Validate(t, report, bad); err == nil {
			t.Errorf("%s: the validator accepts it", name)
		}
	}
}

// TestAPIPageListsEveryOperation reads the OpenAPI document on its own and
// requires the rendered /api page to name every operation in it, each
// method of each path, in its list and as a section heading.
func TestAPIPageListsEveryOperation(t *testing.T) {
	h := newHarness(t)
	resp, b := h.do("GET", "/api", "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	page := string(b)
	methods := []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}
	n := 0
	for path, item := range obj(loadSpec(t)["paths"]) {
		for key := range obj(item) {
			if !slices.Contains(methods, key) {
				continue // parameters, summary, servers: not operations
			}
			n++
			op := "<code>" + strings.ToUpper(key) + " " + path + "</code>"
			if c := strings.Count(page, op); c != 2 {
				t.Errorf("/api shows %s %d times, want 2 (the list of operations and its section)", op, c)
			}
		}
	}
	if n == 0 {
		t.Fatal("the OpenAPI document has no operations")
	}
}

// TestOpenAPIChangesCauses: a re-audit's changes with a finding whose
// cause changed match the Changes schema, and a kept cause with a field
// the document does not describe is refused.
func TestOpenAPIChangesCauses(t *testing.T) {
	t.Parallel()
	doc := loadDoc(t)
	prev := schedule.Summary{Status: "complete", Findings: []schedule.FindingKey{}, Causes: []schedule.CauseKey{
		{Code: "title.render_only", Lane: "render", Kind: "script", Script: "/js/app.js"},
		{Code: "canonical.in_body", Lane: "plain", Kind: "parser", Element: "img"}}}
	cur := schedule.Summary{Status: "complete", Findings: []schedule.FindingKey{}, Causes: []schedule.CauseKey{
		{Code: "title.render_only", Lane: "render", Kind: "request", Script: "tags.example/gtm.js", Request: "/api/title"},
		{Code: "canonical.in_body", Lane: "plain", Kind: "parser", Element: "iframe"}}}
	c := schedule.Compare(&prev, cur)
	if len(c.Causes) != 2 {
		t.Fatalf("%d cause changes, want 2: %+v", len(c.Causes), c.Causes)
	}
	good, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	const changes = "/components/schemas/Changes"
	if err := doc.Validate(t, changes, good); err != nil {
		t.Fatalf("changes with cause changes do not match openapi.json: %v", err)
	}
	var m map[string]any
	json.Unmarshal(good, &m)
	obj(m["causes"].([]any)[0])["before"].(map[string]any)["stack"] = "at f"
	bad, _ := json.Marshal(m)
	if err := doc.Validate(t, changes, bad); err == nil {
		t.Error("the Changes schema accepts a kept cause with an undocumented field")
	}
}
