package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// terminalAttack retitles a terminal, rings its bell, turns its background
// red, reverses the text that follows and starts a C1 control sequence.
const terminalAttack = "\x1b]0;PWNED\x07\x1b[41m\u202eevil\u009b31m"

// rawControls fails when body, an HTML page or a JSON answer, carries ESC,
// BEL, U+202E, U+0085 or U+009B raw.
func rawControls(tb testing.TB, what string, body []byte) {
	tb.Helper()
	for _, c := range []string{"\x1b", "\x07", "\u202e", "\u0085", "\u009b"} {
		if i := strings.Index(string(body), c); i >= 0 {
			tb.Errorf("%s carries %q raw %d times, first: %q", what, c, strings.Count(string(body), c),
				body[max(0, i-40):min(len(body), i+40)])
		}
	}
}

// TestReportEscapesControls: issue 34. A page title carrying terminal
// control sequences reaches neither the report page nor its JSON raw; the
// page shows the characters as visible escapes and the JSON as \u
// escapes that decode to the title as the page had it.
func TestReportEscapesControls(t *testing.T) {
	h := newHarness(t)
	title := "T" + terminalAttack + "\u0085"
	h.site.Handle("/terminal.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>"+title+"</title><h1>Blue stoneware kettle</h1>")
	}))
	resp, b := h.post("http://shop.example/terminal.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	id := decode[pending](t, b).ID
	if got := h.waitReport(id).Lanes.Plain.Page; got == nil || got.Title != title {
		t.Fatalf("the decoded report's title is not the page's: %+v", got)
	}
	resp, b = h.do("GET", "/api/v1/audits/"+id, "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	rawControls(t, "the report's JSON", b)
	if !strings.Contains(string(b), `\u202eevil\u009b31m\u0085`) {
		t.Errorf("the report's JSON does not show the title's controls as \\u escapes: %.2000q", b)
	}
	resp, b = h.do("GET", "/r/"+id, "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	rawControls(t, "the report page", b)
	if n := strings.Count(string(b), `T\x1b]0;PWNED\x07\x1b[41m\u202eevil\x9b31m\x85`); n < 2 {
		t.Errorf("the report page shows the escaped title %d times, want it in the table and the findings", n)
	}
}

// TestErrorPagesEscapeControls: the form shown again with its error, and
// the API's error, do not reflect a submitter's own control characters.
func TestErrorPagesEscapeControls(t *testing.T) {
	h := newHarness(t)
	u := "http://shop.example/" + terminalAttack
	resp, b := h.postForm(u, nil)
	wantStatus(t, resp, b, http.StatusBadRequest)
	rawControls(t, "the form's error page", b)
	if !strings.Contains(string(b), `value="http://shop.example/\x1b]0;PWNED\x07\x1b[41m\u202eevil\x9b31m"`) {
		t.Errorf("the form does not show the submitted address escaped: %q", b)
	}
	resp, b = h.post(u)
	wantError(t, resp, b, http.StatusBadRequest, codeInvalidURL, false)
	rawControls(t, "the API's error", b)
}

// TestPagesEscapeControls: every page goes through one escaper, the
// layout's title included, so no view needs to remember it.
func TestPagesEscapeControls(t *testing.T) {
	t.Parallel()
	p, r := causesFixture(t)
	r.URL += terminalAttack
	r.Lanes.Render.Error = "E" + terminalAttack
	rec := httptest.NewRecorder()
	p.renderPage(rec, http.StatusOK, "report", layout{Title: "Audit of " + r.URL, NoIndex: true, Data: newReportView(r)})
	page := rec.Body.Bytes()
	rawControls(t, "the report page", page)
	for _, want := range []string{`<title>Audit of ` + strings.TrimSuffix(r.URL, terminalAttack) + `\x1b]0;PWNED\x07\x1b[41m\u202eevil\x9b31m · Lekta</title>`,
		`E\x1b]0;PWNED\x07\x1b[41m\u202eevil\x9b31m`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report page lacks %q", want)
		}
	}
}
