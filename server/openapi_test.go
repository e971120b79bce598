package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// spec is the embedded OpenAPI document, decoded generically.
type spec map[string]any

func loadSpec(tb testing.TB) spec {
	tb.Helper()
	b, err := webFS.ReadFile("web/openapi.json")
	if err != nil {
		tb.Fatal(err)
	}
	var s spec
	if err := json.Unmarshal(b, &s); err != nil {
		tb.Fatalf("openapi.json: %v", err)
	}
	if s["openapi"] != "3.1.0" {
		tb.Fatalf("openapi version %v, want 3.1.0", s["openapi"])
	}
	return s
}

// obj is a JSON object or nil.
func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// resolve follows a local $ref ("#/components/...").
func (s spec) resolve(v any) map[string]any {
	m := obj(v)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = map[string]any(s)
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = obj(cur)[part]
		}
		m = obj(cur)
	}
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

// validate checks v against a JSON schema subset: $ref, allOf, type,
// const, enum, required, properties, items, additionalProperties.
func (s spec) validate(schema any, v any, at string) []string {
	sc := s.resolve(schema)
	if sc == nil {
		return nil
	}
	var errs []string
	for _, sub := range asList(sc["allOf"]) {
		errs = append(errs, s.validate(sub, v, at)...)
	}
	if t, ok := sc["type"]; ok && !typeOK(t, v) {
		return append(errs, fmt.Sprintf("%s: %T does not have type %v", at, v, t))
	}
	if c, ok := sc["const"]; ok && v != c {
		errs = append(errs, fmt.Sprintf("%s: %v, want %v", at, v, c))
	}
	if e := asList(sc["enum"]); e != nil && !slices.Contains(e, v) {
		errs = append(errs, fmt.Sprintf("%s: %v not in %v", at, v, e))
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range asList(sc["required"]) {
			if _, ok := x[r.(string)]; !ok {
				errs = append(errs, fmt.Sprintf("%s: required field %q missing", at, r))
			}
		}
		props := obj(sc["properties"])
		for k, val := range x {
			if p, ok := props[k]; ok {
				errs = append(errs, s.validate(p, val, at+"."+k)...)
			} else if ap := obj(sc["additionalProperties"]); ap != nil {
				errs = append(errs, s.validate(ap, val, at+"."+k)...)
			}
		}
	case []any:
		for i, e := range x {
			errs = append(errs, s.validate(sc["items"], e, at+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return errs
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func typeOK(t any, v any) bool {
	if l, ok := t.([]any); ok {
		for _, one := range l {
			if typeOK(one, v) {
				return true
			}
		}
		return false
	}
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "null":
		return v == nil
	}
	return false
}

// checkSpec checks every recorded exchange with a documented path: the
// method and status are documented, the body matches the response schema,
// and documented Retry-After headers are present.
func (h *harness) checkSpec(t *testing.T) {
	t.Helper()
	s := loadSpec(t)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ex := range h.exchange {
		tmpl, item := s.route(ex.path)
		if item == nil {
			continue // a page for people, not part of the API
		}
		op := obj(item[strings.ToLower(ex.method)])
		if op == nil {
			t.Errorf("%s %s: method not documented under %s", ex.method, ex.path, tmpl)
			continue
		}
		resp := s.resolve(obj(op["responses"])[strconv.Itoa(ex.status)])
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
		media := obj(obj(resp["content"])[ct])
		if media == nil {
			t.Errorf("%s %s %d: content type %q not documented", ex.method, tmpl, ex.status, ct)
			continue
		}
		if ct != "application/json" {
			continue
		}
		var body any
		if err := json.Unmarshal(ex.body, &body); err != nil {
			t.Errorf("%s %s %d: body is not JSON: %v", ex.method, tmpl, ex.status, err)
			continue
		}
		for _, e := range s.validate(media["schema"], body, "body") {
			t.Errorf("%s %s %d: %s", ex.method, tmpl, ex.status, e)
		}
	}
}

// TestOpenAPIRoutes checks that every documented path and method is a
// route of the server (not the catch-all), and that the spec is served.
func TestOpenAPIRoutes(t *testing.T) {
	h := newHarness(t)
	s := loadSpec(t)
	mux := h.srv.mux
	for path, item := range obj(s["paths"]) {
		for method := range obj(item) {
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

// TestOpenAPIDocumentsEveryAPIStatus provokes nothing itself; it checks
// that the statuses the spec documents for the audit endpoints are the
// ones the handlers can produce, so the spec lists no dead answers.
func TestOpenAPIDocumentsEveryAPIStatus(t *testing.T) {
	s := loadSpec(t)
	want := map[string][]string{
		"post /api/v1/audits":     {"200", "202", "400", "403", "429", "503"},
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
