package server

import (
	"strings"
	"testing"
)

// TestJSONBodiesReadOneWay: every JSON body of the API is read by one rule
// (one object, no field it does not know, nothing after it, at most its
// size) and a refusal is a sentence, never the decoder's Go words.
func TestJSONBodiesReadOneWay(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	plain := map[string]string{"Content-Type": "application/json"}
	site := `{"url":"http://shop.example/","schedule":"daily"}`
	cases := []struct {
		name, path, body string
		hdr              map[string]string
		status           int
		code, message    string
	}{
		{"audit body an array", "/api/v1/audits", `["http://shop.example/"]`, plain, 400, codeBadRequest,
			"The body must be a JSON object with a url field."},
		{"audit url a number", "/api/v1/audits", `{"url":42}`, plain, 400, codeBadRequest,
			"The url field must be a string."},
		{"audit unknown field", "/api/v1/audits", `{"url":"http://shop.example/","x":1}`, plain, 400, codeBadRequest,
			"Unknown field “x”."},
		{"audit two objects", "/api/v1/audits", `{"url":"http://shop.example/"}{"url":"http://a.example/"}`, plain, 400, codeBadRequest,
			"The body must be one JSON object with nothing after it."},
		{"audit not JSON", "/api/v1/audits", `{"url":`, plain, 400, codeBadRequest,
			"The body is not valid JSON: it ends in the middle of a value."},
		{"audit empty", "/api/v1/audits", ``, plain, 400, codeBadRequest,
			"The body is empty; send a JSON object with a url field."},
		{"audit too large", "/api/v1/audits", `{"url":"http://shop.example/` + strings.Repeat("a", 70<<10) + `"}`, plain, 413, codeTooLarge,
			"The body is larger than 64 KiB."},
		{"site two objects", "/api/v1/sites", site + site, auth, 400, codeBadRequest,
			"The body must be one JSON object with nothing after it."},
		{"site body an array", "/api/v1/sites", `[` + site + `]`, auth, 400, codeBadRequest,
			"The body must be a JSON object with url and schedule fields, and optionally webhook_url."},
		{"site unknown field", "/api/v1/sites", `{"url":"http://shop.example/","schedule":"daily","admin":true}`, auth, 400, codeBadRequest,
			"Unknown field “admin”."},
		{"site without JSON type", "/api/v1/sites", site, map[string]string{"Authorization": auth["Authorization"]}, 400, codeBadRequest,
			"Send the body as JSON, with Content-Type: application/json."},
		{"verify line a number", "/api/v1/verify", `{"line":5}`, plain, 400, codeBadRequest,
			"The line field must be a string."},
		{"verify two objects", "/api/v1/verify", `{"line":"x"} {}`, plain, 400, codeBadRequest,
			"The body must be one JSON object with nothing after it."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := h.siteCount()
			resp, b := h.do("POST", tc.path, tc.body, tc.hdr)
			e := wantError(t, resp, b, tc.status, tc.code, false)
			if e.Error.Message != tc.message {
				t.Errorf("message %q, want %q", e.Error.Message, tc.message)
			}
			if n := h.siteCount(); n != before {
				t.Errorf("a refused body saved a site (%d sites, were %d)", n, before)
			}
		})
	}
	h.checkSpec(t)
}
