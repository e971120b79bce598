package compare

import (
	"reflect"
	"strings"
	"testing"
)

// The soft 404 codes, written out: codes are stable names, so the tests
// pin the strings rather than the constants.
const (
	codeSoft404           = "soft_404.detected"
	codeSoft404RenderOnly = "soft_404.render_only"
	codeSoft404Handled    = "soft_404.handled"
)

// notFoundDoc is a short page in lang with the given title, first heading
// and paragraph, and the baseline description.
func notFoundDoc(lang, title, h1, text string) string {
	return `<!doctype html><html lang="` + lang + `"><head><title>` + title + `</title>` + baseDescription +
		`</head><body><header><a href="/">Home</a></header><main><h1>` + h1 + `</h1><p>` + text + `</p></main></body></html>`
}

// appShell is a client-rendered app's server HTML: a title and an empty root.
const appShell = `<!doctype html><html lang="en"><head><title>Shop</title>` + baseDescription +
	`</head><body><div id="root"></div><script src="/app.js"></script></body></html>`

// englishNotFound is an English not-found route as a client app renders it.
var englishNotFound = notFoundDoc("en", "Page Not Found | Shop", "404", "Sorry, we could not find that page.")

// wantCause checks the cause of the first finding with code.
func wantCause(code string, want Cause) func(testing.TB, Result) {
	return func(tb testing.TB, res Result) {
		tb.Helper()
		for _, f := range res.Findings {
			if f.Code != code {
				continue
			}
			if f.Cause == nil || !reflect.DeepEqual(*f.Cause, want) {
				tb.Errorf("%s: cause %+v, want %+v", code, f.Cause, want)
			}
			return
		}
		tb.Errorf("no %s finding; got %s", code, codesOf(res))
	}
}

// noCodes checks that no finding has one of codes.
func noCodes(codes ...string) func(testing.TB, Result) {
	return func(tb testing.TB, res Result) {
		tb.Helper()
		for _, f := range res.Findings {
			for _, c := range codes {
				if f.Code == c {
					tb.Errorf("unexpected %s: %s", c, f.Message)
				}
			}
		}
	}
}

// messageHas checks that the finding with code says every one of parts.
func messageHas(code string, parts ...string) func(testing.TB, Result) {
	return func(tb testing.TB, res Result) {
		tb.Helper()
		for _, f := range res.Findings {
			if f.Code != code {
				continue
			}
			for _, p := range parts {
				if !strings.Contains(f.Message, p) {
					tb.Errorf("%s message lacks %q: %s", code, p, f.Message)
				}
			}
			return
		}
		tb.Errorf("no %s finding; got %s", code, codesOf(res))
	}
}

// all runs several checks.
func all(checks ...func(testing.TB, Result)) func(testing.TB, Result) {
	return func(tb testing.TB, res Result) {
		tb.Helper()
		for _, c := range checks {
			c(tb, res)
		}
	}
}

// longArticle is a blog post about 404 pages: well over the word limit.
var longArticle = notFoundDoc("en", "404 errors: page not found, explained", "Page not found? Here is why",
	"404 means the server found nothing at that address. "+strings.Repeat("A broken link sends visitors to a missing page, and search engines drop it after a while. ", 20))

// soft404Cases are pages that answer 200 but say they were not found, and
// their look-alikes that must not be flagged.
var soft404Cases = []diffCase{
	{name: "English not-found page in both lanes",
		in:   pair(englishNotFound, englishNotFound, nil),
		some: true, want: []finding{{code: codeSoft404, sev: SeverityWarning}},
		check: all(wantCause(codeSoft404, Cause{Kind: CauseSoft404, Mechanism: "both", Element: "title"}),
			messageHas(codeSoft404, "soft 404", "404 or 410"), noCodes(codeSoft404RenderOnly, codeSoft404Handled))},
	{name: "Japanese not-found title in both lanes",
		in: pair(notFoundDoc("ja", "お探しのページは見つかりませんでした｜ショップ", "エラー", "トップページへ"),
			notFoundDoc("ja", "お探しのページは見つかりませんでした｜ショップ", "エラー", "トップページへ"), nil),
		some: true, want: []finding{{code: codeSoft404, sev: SeverityWarning}},
		check: wantCause(codeSoft404, Cause{Kind: CauseSoft404, Mechanism: "both", Element: "title"})},
	{name: "Russian not-found text in both lanes",
		in: pair(notFoundDoc("ru", "Магазин", "Ошибка", "Страница не найдена. Вернитесь на главную."),
			notFoundDoc("ru", "Магазин", "Ошибка", "Страница не найдена. Вернитесь на главную."), nil),
		some: true, want: []finding{{code: codeSoft404, sev: SeverityWarning}},
		check: wantCause(codeSoft404, Cause{Kind: CauseSoft404, Mechanism: "both", Element: "text"})},
	{name: "Arabic not-found heading in both lanes",
		in: pair(notFoundDoc("ar", "المتجر", "الصفحة غير موجودة", "العودة إلى الصفحة الرئيسية"),
			notFoundDoc("ar", "المتجر", "الصفحة غير موجودة", "العودة إلى الصفحة الرئيسية"), nil),
		some: true, want: []finding{{code: codeSoft404, sev: SeverityWarning}},
		check: wantCause(codeSoft404, Cause{Kind: CauseSoft404, Mechanism: "both", Element: "heading"})},
	{name: "Greek not-found heading in accented capitals",
		in: pair(notFoundDoc("el", "Κατάστημα", "Η ΣΕΛΊΔΑ ΔΕΝ ΒΡΈΘΗΚΕ", "Αρχική"),
			notFoundDoc("el", "Κατάστημα", "Η ΣΕΛΊΔΑ ΔΕΝ ΒΡΈΘΗΚΕ", "Αρχική"), nil),
		some: true, want: []finding{{code: codeSoft404}},
		check: wantCause(codeSoft404, Cause{Kind: CauseSoft404, Mechanism: "both", Element: "heading"})},
	{name: "long article about 404 errors is not a soft 404",
		in:    pair(longArticle, longArticle, nil),
		check: noCodes(codeSoft404, codeSoft404RenderOnly, codeSoft404Handled)},
	{name: "ordinary page is not a soft 404",
		in:    pair(doc("", ""), doc("", ""), nil),
		check: noCodes(codeSoft404, codeSoft404RenderOnly, codeSoft404Handled)},
	{name: "error number inside a longer number is not not-found wording",
		in:    pair(notFoundDoc("en", "Order 14045", "Order 14045", "Shipped."), notFoundDoc("en", "Order 14045", "Order 14045", "Shipped."), nil),
		check: noCodes(codeSoft404, codeSoft404RenderOnly, codeSoft404Handled)},
	{name: "not-found page answering 404 is not a soft 404",
		in:   pair(englishNotFound, englishNotFound, func(p, r *Snapshot) { p.Status, r.Status = 404, 404 }),
		some: true, want: []finding{{code: CodeStatusNotOK}},
		check: noCodes(codeSoft404, codeSoft404RenderOnly, codeSoft404Handled)},
	{name: "app shell whose rendered page is the not-found route",
		in:   pair(appShell, englishNotFound, nil),
		some: true, want: []finding{{code: codeSoft404RenderOnly, lane: LaneRender, sev: SeverityWarning}},
		check: all(wantCause(codeSoft404RenderOnly, Cause{Kind: CauseSoft404, Mechanism: "render", Element: "title"}),
			messageHas(codeSoft404RenderOnly, "soft 404", "AI crawlers", "empty shell"),
			noCodes(codeSoft404, codeSoft404Handled),
			// Issue 32: the verdict leads with the not-found route, and
			// what the not-found page shows is no content to serve.
			verdictLeads(codeSoft404RenderOnly), consequencesOf(codeSoft404RenderOnly, CauseSoft404, CodeH1RenderOnly))},
	{name: "server page with content whose rendered page is the not-found route",
		in:   pair(longArticle, englishNotFound, nil),
		some: true, want: []finding{{code: codeSoft404RenderOnly, lane: LaneRender, sev: SeverityWarning}},
		check: all(messageHas(codeSoft404RenderOnly, "soft 404", "words", "index the server's page"),
			noCodes(codeSoft404, codeSoft404Handled))},
	{name: "app shell whose not-found route adds noindex",
		in:   pair(appShell, strings.Replace(englishNotFound, "</title>", `</title><meta name="robots" content="noindex">`, 1), nil),
		some: true, want: []finding{{code: codeSoft404Handled, lane: LaneRender, sev: SeverityInfo}},
		check: all(wantCause(codeSoft404Handled, Cause{Kind: CauseSoft404, Mechanism: "render", Element: "title"}),
			messageHas(codeSoft404Handled, "noindex", "correct"),
			noCodes(codeSoft404, codeSoft404RenderOnly))},
	{name: "app shell that redirects by script to a URL answering 404",
		in: pair(appShell, englishNotFound, func(p, r *Snapshot) {
			r.Status, r.FinalURL = 404, "http://shop.example/not-found"
			r.Render.Navigations = 1
			r.Render.ClientRedirects = []ClientRedirect{{Mechanism: "script", From: "http://shop.example/page", To: "http://shop.example/not-found", PageTime: 250 * timeMS}}
		}),
		some: true, want: []finding{{code: codeSoft404Handled, lane: LaneRender, sev: SeverityInfo}, {code: "render.redirect_script", lane: LaneRender}},
		check: all(wantCause(codeSoft404Handled, Cause{Kind: CauseSoft404, Mechanism: "render", Target: "http://shop.example/not-found"}),
			messageHas(codeSoft404Handled, "“http://shop.example/not-found”", "404", "correct"),
			noCodes(codeSoft404, codeSoft404RenderOnly, CodeStatusDiffers, CodeStatusNotOK))},
}

// notFoundHeadings is a not-found page heading in each language the word
// list must cover, written as sites write them (case, punctuation, words
// around the phrase).
var notFoundHeadings = []struct{ lang, heading string }{
	{"en", "Oops! That page can’t be found."},
	{"es", "Página no encontrada"},
	{"de", "Seite nicht gefunden!"},
	{"ja", "ページが見つかりません"},
	{"fr", "Page introuvable"},
	{"ru", "Страница не найдена"},
	{"pt", "Página não encontrada"},
	{"it", "Pagina non trovata"},
	{"fa", "صفحه پیدا نشد"},
	{"nl", "Pagina niet gevonden"},
	{"pl", "Nie znaleziono strony"},
	{"tr", "Sayfa bulunamadı"},
	{"zh-Hans", "页面未找到"},
	{"zh-Hant", "找不到頁面"},
	{"vi", "Không tìm thấy trang"},
	{"id", "Halaman tidak ditemukan"},
	{"ko", "페이지를 찾을 수 없습니다"},
	{"cs", "Stránka nenalezena"},
	{"ar", "الصفحة غير موجودة"},
	{"uk", "Сторінку не знайдено"},
	{"hu", "Az oldal nem található"},
	{"sv", "Sidan hittades inte"},
	{"el", "Η σελίδα δεν βρέθηκε"},
}

// TestSoft404Languages checks that a not-found heading is recognised in
// each of the languages of the word list.
func TestSoft404Languages(t *testing.T) {
	t.Parallel()
	for _, w := range notFoundHeadings {
		t.Run(w.lang, func(t *testing.T) {
			t.Parallel()
			d := notFoundDoc(w.lang, "Shop", w.heading, "")
			checkDiffCase(t, diffCase{in: pair(d, d, nil), some: true, want: []finding{{code: codeSoft404}},
				check: wantCause(codeSoft404, Cause{Kind: CauseSoft404, Mechanism: "both", Element: "heading"})})
		})
	}
}

// TestSoft404 checks the soft 404 findings of inline document pairs.
func TestSoft404(t *testing.T) {
	t.Parallel()
	runDiffCases(t, soft404Cases)
}
