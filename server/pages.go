package server

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/escape"
	"lekta.dev/lekta/policy"
)

//go:embed web
var webFS embed.FS

// pageFiles names the content template of each page.
var pageFiles = map[string]string{
	"form":      "web/form.html",
	"report":    "web/report.html",
	"progress":  "web/progress.html",
	"bot":       "web/bot.html",
	"verify":    "web/verify.html",
	"notfound":  "web/notfound.html",
	"api":       "web/api.html",
	"signin":    "web/signin.html",
	"dashboard": "web/dashboard.html",
	"site":      "web/site.html",
	"link":      "web/link.html",
	"keys":      "web/keys.html",
	"confirm":   "web/confirm.html",
}

// pages holds the parsed templates, one set per page on a shared layout.
type pages struct {
	t map[string]*template.Template
}

func newPages() (*pages, error) {
	p := &pages{t: map[string]*template.Template{}}
	for name, file := range pageFiles {
		files := []string{"web/layout.html", file}
		if name == "dashboard" || name == "site" {
			files = append(files, "web/sitefields.html")
		}
		t, err := template.New(name).ParseFS(webFS, files...)
		if err != nil {
			return nil, fmt.Errorf("parse template %s: %w", name, err)
		}
		p.t[name] = t
	}
	return p, nil
}

// layout is the data of the shared layout.
type layout struct {
	Title   string
	Refresh int
	// Follow, when set, is the address the page reloads itself at once to
	// (a request the server holds until there is news: followPage).
	Follow  string
	NoIndex bool
	Data    any
}

// render executes a page into a buffer first, so a template error never
// sends half a page.
func (p *pages) render(w http.ResponseWriter, _ *http.Request, status int, name string, data any) {
	p.renderPage(w, status, name, layout{Title: pageTitle(name), Data: data})
}

// renderPage executes a page on the layout l, as render does. Every page
// passes escape.Page on its way out, so a control or bidi character that
// came from a page or a submitter shows as a visible escape (\x1b,
// \u202e) wherever a template put it, and no view has to remember it.
func (p *pages) renderPage(w http.ResponseWriter, status int, name string, l layout) {
	var buf bytes.Buffer
	if err := p.t[name].ExecuteTemplate(&buf, "layout", l); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(escape.Page(buf.Bytes()))
}

func pageTitle(name string) string {
	switch name {
	case "form":
		return "What do AI crawlers miss?"
	case "bot":
		return "LektaBot"
	case "verify":
		return "Was that really LektaBot?"
	case "api":
		return "API reference"
	}
	return "Lekta"
}

// formView is what form.html renders.
type formView struct {
	URL      string
	Error    string
	Code     string
	CacheTTL string
}

// formPage serves the empty form.
func formPage(pg *pages, cacheTTL time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pg.render(w, r, http.StatusOK, "form", formView{CacheTTL: compare.Span(cacheTTL)})
	})
}

// maxFormBytes caps a form submission's body.
const maxFormBytes = 16 << 10

// submitForm handles the form: 303 to the report, or the form again with
// the error next to the field and the status of the error.
func (s *Server) submitForm() http.Handler {
	cop := http.NewCrossOriginProtection()
	ttl := compare.Span(s.cfg.Policy.Limits.CacheTTL)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(raw string, e *apiError) {
			if e.outcome == "" {
				s.countInvalid(audit.TriggerForm, e)
			}
			e.setRetryAfter(w.Header())
			s.pages.render(w, r, e.Status, "form", formView{URL: raw, Error: e.Message, Code: e.Code, CacheTTL: ttl})
		}
		if err := cop.Check(r); err != nil {
			fail("", &apiError{Status: http.StatusForbidden, Code: codeForbidden,
				Message: "This form only accepts submissions from its own pages."})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			fail("", badRequest("the form could not be read"))
			return
		}
		// As a browser's address bar does, a typed address without a
		// scheme is taken as https://.
		raw := policy.WithDefaultScheme(r.PostForm.Get("url"))
		if raw == "" {
			fail("", &apiError{Status: http.StatusBadRequest, Code: codeInvalidURL, Message: "Enter the address of a page."})
			return
		}
		sub, err := s.submit(r.Context(), raw, audit.TriggerForm, clientAddr(r, s.cfg.TrustedProxies))
		if err != nil {
			e := errorFor(err)
			if e.Status >= 500 && e.Code == codeInternal {
				s.cfg.Logger.Error("form submission", "error", err)
			}
			fail(raw, e)
			return
		}
		http.Redirect(w, r, "/r/"+sub.id, http.StatusSeeOther)
	})
}

// followPage is how long a running report page's reload is held for
// news before it shows the audit's progress again.
const followPage = 3 * time.Second

// reportPage serves /r/{id}: progress while the audit runs here, else the
// stored report.
func (s *Server) reportPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Robots-Tag", "noindex, nofollow")
		w.Header().Set("Cache-Control", "no-store")
		id := r.PathValue("id")
		// The page reloads itself at ?follow, which the server holds
		// until the report is stored or followPage passes: the report
		// shows the moment it exists, and the steps every few seconds.
		wait := time.Duration(0)
		if r.URL.Query().Has("follow") {
			wait = followPage
		}
		rep, running, err := s.await(r.Context(), id, wait)
		switch {
		case running != nil:
			s.pages.renderPage(w, http.StatusOK, "progress", layout{Title: "Auditing…", Follow: "/r/" + running.id + "?follow",
				NoIndex: true, Data: s.progressView(running)})
		case err != nil:
			e := errorFor(err)
			if e.Code == codeNotFound {
				notFoundPage(s.pages, "No such report", e.Message).ServeHTTP(w, r)
				return
			}
			if e.Code == codeInternal {
				s.cfg.Logger.Error("read report", "id", id, "error", err)
			}
			e.setRetryAfter(w.Header())
			s.pages.renderPage(w, e.Status, "notfound", layout{Title: "Report unavailable", NoIndex: true,
				Data: struct{ Title, Message string }{"Report unavailable", e.Message}})
		default:
			v := newReportView(rep)
			v.Since = s.sinceLines(r.Context(), rep.ID)
			s.pages.renderPage(w, http.StatusOK, "report", layout{Title: "Audit of " + rep.URL, NoIndex: true, Data: v})
		}
	})
}

// progressView is the page of an audit queued or running.
func (s *Server) progressView(st *status) progressView {
	now := s.cfg.Now()
	v := progressView{ID: st.id, URL: st.url, State: st.state, Steps: stepViews(audit.Step(st.step)), Typical: s.durations.estimate(), Note: st.note}
	if !st.since.IsZero() && st.state == cache.ProgressRunning {
		v.Elapsed = "less than a second"
		if d := now.Sub(st.since); d >= time.Second {
			v.Elapsed = compare.Duration(d.Truncate(time.Second))
		}
	}
	if d := st.startsAt.Sub(now); st.state == cache.ProgressQueued && d >= time.Second {
		v.StartsIn = "in " + compare.Duration(d.Truncate(time.Second))
	}
	return v
}

// notFoundPage answers 404 with a short page.
func notFoundPage(pg *pages, title, msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pg.renderPage(w, http.StatusNotFound, "notfound", layout{Title: title, NoIndex: true,
			Data: struct{ Title, Message string }{title, msg}})
	})
}

// staticFile serves one embedded file with a content type and a day of caching.
func staticFile(name, contentType string) http.Handler {
	b, err := webFS.ReadFile(name)
	if err != nil {
		panic(err) // the file is embedded at build time
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Write(b)
	})
}
