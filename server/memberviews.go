package server

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
)

// Dates on member pages: "2 Dec 2026 16:40 UTC", and its machine form.
const (
	memberTime    = "2 Jan 2006 15:04 UTC"
	memberTimeISO = time.RFC3339
)

// siteForm is what a site form shows: the values as typed and an error
// beside the field it is about (Field "" for one about the whole form).
type siteForm struct {
	URL, Schedule, Webhook string
	Field, Error           string
	Schedules              []scheduleOption
	// MinWords says the service's minimum interval: "at least 1 hour apart".
	MinWords string
	// Note is a fixed sentence about the last save, shown above the page
	// once ("You already saved this URL; here it is.").
	Note string
}

// siteCard is one saved site on the dashboard: a table row at desktop
// width, a card on a phone.
type siteCard struct {
	ID, URL, Schedule string
	Ran, RanISO       string
	State             runState
	Trend             template.HTML
	Critical          []string
}

// historyRow is one re-audit on the site page.
type historyRow struct {
	Ran, RanISO, Trigger, ReportID string
	// Cached says, for a run answered from the result cache, how old the
	// result was.
	Cached     string
	State      runState
	Regression bool
	Changes    []string
}

// historyTriggers say who started a re-audit.
var historyTriggers = map[string]string{
	string(audit.TriggerScheduled): "on schedule",
	string(audit.TriggerMember):    "run now",
}

func (s *Server) dashboard(w http.ResponseWriter, r *http.Request, ss session) {
	s.renderDashboard(w, r, ss, http.StatusOK, s.newSiteForm("", "daily", ""))
}

func (s *Server) renderDashboard(w http.ResponseWriter, r *http.Request, ss session, status int, form siteForm) {
	sites, err := s.cfg.Members.MemberSites(r.Context(), ss.member.ID)
	if err != nil {
		http.Error(w, unavailableWords, http.StatusServiceUnavailable)
		return
	}
	ids := make([]string, len(sites))
	for i, site := range sites {
		ids[i] = site.ID
	}
	recent, err := s.cfg.Members.Recent(r.Context(), ids, trendEntries)
	if err != nil {
		http.Error(w, unavailableWords, http.StatusServiceUnavailable)
		return
	}
	cards := make([]siteCard, 0, len(sites))
	for _, site := range sites {
		c := siteCard{ID: site.ID, URL: site.URL, Schedule: scheduleWords(site.Schedule), State: notRunYet}
		if es := recent[site.ID]; len(es) > 0 {
			c.Ran, c.RanISO = es[0].RanAt.UTC().Format(memberTime), es[0].RanAt.UTC().Format(memberTimeISO)
			c.State, c.Critical, c.Trend = stateOf(es[0]), openCritical(es[0]), trendSVG(es)
		}
		cards = append(cards, c)
	}
	data := struct {
		Email, CSRF string
		Sites       []siteCard
		Form        siteForm
	}{ss.member.Email, ss.csrf, cards, form}
	s.pages.renderPage(w, status, "dashboard", layout{Title: "Your saved sites", NoIndex: true, Data: data})
}

// newSiteForm is a site form holding the given values.
func (s *Server) newSiteForm(u, sched, hook string) siteForm {
	min := s.minInterval()
	return siteForm{URL: u, Schedule: sched, Webhook: hook, Schedules: scheduleOptions(sched, min),
		MinWords: "at least " + compare.Span(min) + " apart"}
}

// minInterval is the shortest time between two re-audits of a site here.
func (s *Server) minInterval() time.Duration {
	if p := s.cfg.Policy.Reaudits; p != nil && p.MinInterval > 0 {
		return p.MinInterval
	}
	return time.Hour
}

// formError is the form again with the error beside the field it is about.
func (s *Server) formError(in siteInput, err error) siteForm {
	form := s.newSiteForm(deref(in.URL), deref(in.Schedule), deref(in.WebhookURL))
	form.Error = errorFor(err).Message
	if fe := (*fieldError)(nil); errors.As(err, &fe) {
		form.Field = fe.field
		if fe.words != "" {
			form.Error = fe.words
		}
	}
	return form
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (s *Server) renderSite(w http.ResponseWriter, r *http.Request, ss session, site records.Site, status int, form siteForm, secret string) {
	es, err := s.cfg.Members.History(r.Context(), site.ID, 100, time.Time{})
	if err != nil {
		http.Error(w, unavailableWords, http.StatusServiceUnavailable)
		return
	}
	rows := make([]historyRow, 0, len(es))
	recorded := make(map[string]bool, len(es))
	for _, e := range es {
		recorded[e.ID] = true
		trig := historyTriggers[e.Trigger]
		if trig == "" {
			trig = e.Trigger
		}
		row := historyRow{Ran: e.RanAt.UTC().Format(memberTime), RanISO: e.RanAt.UTC().Format(memberTimeISO),
			Trigger: trig, ReportID: e.ReportID, State: stateOf(e), Regression: e.Regression, Changes: changeLog(e)}
		if cached, age := cachedRun(e); cached {
			row.Cached = "from the cache, " + compare.Duration(time.Duration(age)*time.Second) + " old"
		}
		rows = append(rows, row)
	}
	delivery := ""
	if !site.WebhookAt.IsZero() {
		delivery = site.WebhookAt.UTC().Format(memberTime) + ": " + site.WebhookResult + "."
	}
	badge := s.badgeURL(site)
	data := struct {
		Site                   records.Site
		Schedule, CSRF, Secret string
		Badge, BadgeMarkdown   string
		BadgeHTML, Delivery    string
		// Relative is set when the snippets are paths (no --public-url).
		Relative bool
		Pending  []pendingRow
		Entries  []historyRow
		Form     siteForm
	}{site, scheduleWords(site.Schedule), ss.csrf, secret, badge,
		"![What AI crawlers see, by Lekta](" + badge + ")",
		`<img src="` + badge + `" alt="What AI crawlers see, by Lekta" height="20">`,
		delivery, s.cfg.PublicURL == "", s.pendingRows(r.Context(), site.ID, recorded), rows, form}
	refresh := siteRefresh(data.Pending, secret != "" || form.Error != "")
	for i := range data.Pending {
		data.Pending[i].Refreshes = refresh > 0 && data.Pending[i].Running
	}
	s.pages.renderPage(w, status, "site", layout{Title: "Saved site", NoIndex: true, Data: data, Refresh: refresh})
}

// siteRunRefresh is how often the site page reloads itself while a run is
// running, as the running report page does.
const siteRunRefresh = 3

// siteRefresh is the site page's refresh while a run is running: none
// when nothing runs, or when the page shows what a reload would lose (a
// secret shown once, a form's error).
func siteRefresh(pending []pendingRow, keep bool) int {
	if keep {
		return 0
	}
	for _, p := range pending {
		if p.Running {
			return siteRunRefresh
		}
	}
	return 0
}

// sinceLines is the change log shown on the report page of a re-audit.
func (s *Server) sinceLines(ctx context.Context, reportID string) []string {
	if s.cfg.Members == nil {
		return nil
	}
	e, err := s.cfg.Members.EntryByReport(ctx, reportID)
	if err != nil {
		return nil
	}
	if lines := changeLog(e); len(lines) > 0 {
		return lines
	}
	return []string{"Nothing that change tracking follows has changed."}
}
