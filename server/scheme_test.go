package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"lekta.dev/lekta/policy"
)

// TestAPITakesAddressWithoutScheme: the API reads shop.example/page as
// https://shop.example/page, as the form and the CLI do.
func TestAPITakesAddressWithoutScheme(t *testing.T) {
	h := newHarness(t)
	resp, b := h.post("shop.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	p := decode[pending](t, b)
	if p.URL != "https://shop.example/index.html" {
		t.Errorf("the API audits %q, want https://shop.example/index.html", p.URL)
	}
	h.waitReport(p.ID)
	h.checkSpec(t)
}

// TestSiteTakesAddressWithoutScheme: a saved site's url and webhook_url
// without a scheme are https://, on create and on update.
func TestSiteTakesAddressWithoutScheme(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	resp, b := h.do("POST", "/api/v1/sites", `{"url":"shop.example/index.html","schedule":"daily","webhook_url":"hooks.example/in"}`, auth)
	wantStatus(t, resp, b, http.StatusCreated)
	s := decode[siteAnswer](t, b)
	if s.URL != "https://shop.example/index.html" || s.WebhookURL != "https://hooks.example/in" {
		t.Errorf("created site has url %q and webhook_url %q, want both on https://", s.URL, s.WebhookURL)
	}
	resp, b = h.do("PATCH", "/api/v1/sites/"+s.ID, `{"url":"other.example/","webhook_url":"hooks.example/other"}`, auth)
	wantStatus(t, resp, b, http.StatusOK)
	s = decode[siteAnswer](t, b)
	if s.URL != "https://other.example/" || s.WebhookURL != "https://hooks.example/other" {
		t.Errorf("updated site has url %q and webhook_url %q, want both on https://", s.URL, s.WebhookURL)
	}
	h.checkSpec(t)
}

// TestFormInABrowserTakesAddressWithoutScheme types an address without a
// scheme into the public form in real Chromium and submits it: the
// browser must not block it (as <input type="url"> does), and the report
// is of the https:// address.
func TestFormInABrowserTakesAddressWithoutScheme(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(mustBrowser(t, 1280, 900), 60*time.Second)
	defer cancel()
	const typed = "shop.example/index.html"
	if err := chromedp.Do(ctx, chromedp.Navigate(h.ts.URL+"/"), chromedp.WaitVisible("#url"),
		chromedp.SendKeys("#url", typed)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	blocked, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#url").validationMessage`))
	if err != nil {
		t.Fatalf("read the field's validity: %v", err)
	}
	if blocked != "" {
		t.Fatalf("the browser blocks %q before submitting: %q", typed, blocked)
	}
	if err := chromedp.Do(ctx, chromedp.Click(`form.audit button[type="submit"]`)); err != nil {
		t.Fatalf("submit the form: %v", err)
	}
	// The progress page (p.progress) or the report (#audited-url) follows.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(`p.progress, #audited-url`)); err != nil {
		t.Fatalf("the form did not lead to a report: %v", err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	id := loc[strings.LastIndex(loc, "/r/")+len("/r/"):]
	if rep := h.waitReport(id); rep.URL != "https://"+typed {
		t.Errorf("the form audited %q, want https://%s", rep.URL, typed)
	}
}

// TestAddressFieldsTakeWhatTheServerTakes: every page-address field is a
// text field that a browser does not validate as a URL, and its maximum
// length is the server's.
func TestAddressFieldsTakeWhatTheServerTakes(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"form.html", "dashboard.html", "site.html"} {
		b, err := webFS.ReadFile("web/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{`name="url"`, `name="webhook_url"`} {
			i := strings.Index(string(b), field)
			if i < 0 {
				continue
			}
			start := strings.LastIndex(string(b[:i]), "<input")
			tag := string(b[start : i+strings.Index(string(b[i:]), ">")+1])
			for _, want := range []string{`type="text"`, `inputmode="url"`, `autocapitalize="none"`, `spellcheck="false"`, fmt.Sprintf(`maxlength="%d"`, policy.MaxURLBytes)} {
				if !strings.Contains(tag, want) {
					t.Errorf("%s: %s lacks %s: %s", name, field, want, tag)
				}
			}
		}
	}
}
