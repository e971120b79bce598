package compare

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// maxNotFoundWords is the most words of main text (of <main> or
// role=main when the page has one, else of the whole body) a page may have
// and still be judged a not-found page. A not-found page is a heading, a
// sentence or two and a link home, well under 100 words even with a search
// box and suggestions; an article that merely mentions "404" has several
// hundred. 150 leaves room for a longer apology without reaching articles.
const maxNotFoundWords = 150

// notFoundWording is not-found wording in the 20-odd languages most used
// for web content, as W3Techs ranks content languages (English, Spanish,
// German, Japanese, French, Russian, Portuguese, Italian, Persian, Dutch,
// Polish, Turkish, Chinese, Vietnamese, Indonesian, Korean, Czech, Arabic,
// Ukrainian, Hungarian, Swedish, Greek). The phrases are the author's own
// wording of what not-found pages of common CMSs and frameworks say
// ("Page not found", "Nothing found", "Oops! That page can't be found.",
// "This page doesn't exist", "404"), written from knowledge of each
// language and not copied from any translation file; extend them when a
// site's wording is missed. They are matched after notFoundForm, so write
// them in any case, with or without accents.
var notFoundWording = map[string][]string{
	"en": {"not found", "nothing found", "nothing was found", "can't be found", "cannot be found", "could not be found",
		"couldn't be found", "couldn't find", "could not find", "page doesn't exist", "page does not exist",
		"page no longer exists", "page you requested", "page you are looking for", "page you're looking for", "404"},
	"es": {"página no encontrada", "no encontrada", "no encontrado", "no se encontró", "no se ha encontrado",
		"no se pudo encontrar", "no podemos encontrar", "la página no existe", "página que buscas", "error 404"},
	"de": {"nicht gefunden", "nichts gefunden", "seite existiert nicht", "seite gibt es nicht", "fehler 404"},
	"ja": {"見つかりません", "見つかりませんでした", "ページが存在しません", "お探しのページ", "404"},
	"fr": {"page introuvable", "introuvable", "non trouvée", "non trouvé", "n'a pas été trouvée", "page n'existe pas",
		"page n'existe plus", "page que vous recherchez", "erreur 404"},
	"ru": {"не найдена", "не найдено", "не найден", "ничего не найдено", "страница не существует", "ошибка 404"},
	"pt": {"página não encontrada", "não encontrada", "não encontrado", "nada encontrado", "página não existe", "erro 404"},
	"it": {"pagina non trovata", "non trovata", "non trovato", "pagina non esiste", "pagina che cerchi", "errore 404"},
	"fa": {"صفحه پیدا نشد", "پیدا نشد", "یافت نشد", "صفحه وجود ندارد", "خطای 404"},
	"nl": {"pagina niet gevonden", "niet gevonden", "niets gevonden", "pagina bestaat niet", "fout 404"},
	"pl": {"nie znaleziono", "nie została znaleziona", "strona nie istnieje", "błąd 404"},
	"tr": {"bulunamadı", "sayfa mevcut değil", "sayfa yok", "hata 404"},
	"zh": {"页面未找到", "未找到", "找不到", "页面不存在", "頁面不存在", "網頁不存在", "无法找到", "無法找到"},
	"vi": {"không tìm thấy", "trang không tồn tại", "lỗi 404"},
	"id": {"tidak ditemukan", "halaman tidak ada", "halaman tidak tersedia"},
	"ko": {"찾을 수 없습니다", "찾을 수 없는", "존재하지 않는 페이지", "페이지가 존재하지 않습니다"},
	"cs": {"nenalezena", "nenalezeno", "nebyla nalezena", "stránka neexistuje", "chyba 404"},
	"ar": {"غير موجودة", "غير موجود", "لم يتم العثور", "تعذر العثور", "خطأ 404"},
	"uk": {"не знайдено", "не знайдена", "сторінка не існує", "помилка 404"},
	"hu": {"nem található", "nincs találat", "oldal nem létezik", "hiba 404"},
	"sv": {"hittades inte", "sidan finns inte", "kunde inte hittas", "fel 404"},
	"el": {"δεν βρέθηκε", "δεν βρέθηκαν", "σελίδα δεν υπάρχει", "σφάλμα 404"},
}

// notFoundPhrases are the phrases of notFoundWording in notFoundForm,
// every language together: a page's language attribute is often missing
// or wrong, and the phrases of one language rarely stand on a short page in
// another.
var notFoundPhrases = func() []string {
	var out []string
	for _, phrases := range notFoundWording {
		for _, p := range phrases {
			out = append(out, notFoundForm(p))
		}
	}
	return out
}()

// notFoundForm writes s for matching: compatibility decomposition (NFKD,
// so full-width letters, ligatures and non-breaking spaces become plain
// ones), combining marks removed (accents, Greek tonos, Arabic vowel
// marks, Japanese voicing marks, so "PAGINA NO ENCONTRADA" matches
// "página no encontrada"), Unicode case folding, the Turkish dotted and
// dotless i as i, typographic apostrophes as ', Arabic-Indic digits as
// ASCII ones, and whitespace runs as one space.
func notFoundForm(s string) string {
	s = norm.NFKD.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case r == 'ı' || r == 'İ':
			r = 'i'
		case r == '’' || r == '‘' || r == 'ʼ' || r == '′':
			r = '\''
		case '٠' <= r && r <= '٩':
			r = '0' + (r - '٠')
		case '۰' <= r && r <= '۹':
			r = '0' + (r - '۰')
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	// A cases.Caser is not safe for concurrent use: one per call.
	return cases.Fold().String(b.String())
}

// saysNotFound reports whether text, in notFoundForm, holds a not-found
// phrase as words of their own: a phrase that starts or ends with a letter
// or digit of a script written with spaces must not continue a longer word
// ("14045" does not say 404).
func saysNotFound(text string) bool {
	for _, p := range notFoundPhrases {
		for from := 0; from <= len(text)-len(p); {
			i := strings.Index(text[from:], p)
			if i < 0 {
				break
			}
			i += from
			if standsAlone(text, i, i+len(p)) {
				return true
			}
			_, size := utf8.DecodeRuneInString(text[i:])
			from = i + size
		}
	}
	return false
}

// standsAlone reports whether text[lo:hi] does not continue a word on
// either side.
func standsAlone(text string, lo, hi int) bool {
	first, _ := utf8.DecodeRuneInString(text[lo:])
	last, _ := utf8.DecodeLastRuneInString(text[:hi])
	if lo > 0 && spacedWordRune(first) {
		if before, _ := utf8.DecodeLastRuneInString(text[:lo]); spacedWordRune(before) {
			return false
		}
	}
	if hi < len(text) && spacedWordRune(last) {
		if after, _ := utf8.DecodeRuneInString(text[hi:]); spacedWordRune(after) {
			return false
		}
	}
	return true
}

// spacedWordRune reports whether r is a letter or digit of a script whose
// words are separated by spaces (not Han, kana, Hangul or Thai, where a
// phrase is found inside a run of text).
func spacedWordRune(r rune) bool {
	return isWordRune(r) && !isIdeograph(r) && !unicode.In(r, unicode.Hangul, unicode.Thai)
}

// notFoundPart says which part of a page is not-found wording: "title",
// "heading" (the first heading), "text" (the start of the main text), or ""
// when none is or the page has too much other content to be an error page.
func notFoundPart(p *Page) string {
	words := p.WordCount
	if p.hasMain {
		words = p.mainWords
	}
	if words > maxNotFoundWords {
		return ""
	}
	if p.Title != "" && saysNotFound(notFoundForm(p.Title)) {
		return "title"
	}
	if h := firstHeading(p); h != "" && saysNotFound(notFoundForm(h)) {
		return "heading"
	}
	if p.lead != "" && saysNotFound(notFoundForm(p.lead)) {
		return "text"
	}
	return ""
}

// firstHeading is the text of the page's first heading, "" when it has none.
func firstHeading(p *Page) string {
	if len(p.Headings) > 0 {
		return p.Headings[0].Text
	}
	if len(p.H1) > 0 {
		return p.H1[0]
	}
	return ""
}

// notFoundQuote is the matched part of a page, quoted for a message.
func notFoundQuote(p *Page, part string) string {
	switch part {
	case "title":
		return "its title reads " + q(p.Title)
	case "heading":
		return "its first heading reads " + q(firstHeading(p))
	}
	return "its text starts " + q(p.lead)
}
