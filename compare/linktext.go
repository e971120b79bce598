package compare

import (
	"strings"
	"unicode"
)

// vagueLinkTexts are, per primary language subtag, anchor texts that say
// nothing about where a link goes. They hold every phrase Lighthouse's
// link-text audit lists for each of its languages (English, Japanese,
// Spanish, Portuguese, Korean, Swedish, German, Tamil, Persian), a few
// more of Lekta's own, and a few more languages.
var vagueLinkTexts = map[string][]string{
	"en": {"click here", "click this", "here", "right here", "this", "this link", "link", "more", "read more",
		"learn more", "see more", "more info", "more information", "information", "go", "start"},
	"de": {"hier", "hier klicken", "klicke hier", "klicken sie hier", "mehr", "weiterlesen", "mehr lesen", "mehr erfahren",
		"mehr infos", "mehr informationen", "dieser link", "link", "los", "siehe", "dies", "das"},
	"fr": {"cliquez ici", "cliquer ici", "ici", "plus", "en savoir plus", "lire la suite", "lire plus",
		"voir plus", "plus d'infos", "plus d'informations", "ce lien", "lien"},
	"es": {"haz clic aquí", "haga clic aquí", "clic aquí", "click aquí", "click aqui", "clicka aquí", "clicka aqui",
		"pincha aquí", "pincha aqui", "aquí", "aqui", "más", "mas", "leer más", "ver más", "más información",
		"más informacion", "mas información", "mas informacion", "este", "este enlace", "enlace", "empezar"},
	"pt": {"clique aqui", "aqui", "mais", "leia mais", "saiba mais", "ver mais", "veja mais",
		"mais informações", "mais informação", "este link", "ir"},
	"it": {"clicca qui", "qui", "altro", "di più", "leggi di più", "scopri di più", "leggi tutto",
		"maggiori informazioni", "questo link"},
	"nl": {"klik hier", "hier", "meer", "lees meer", "meer lezen", "meer informatie", "meer info", "deze link"},
	"sv": {"klicka här", "här", "mer", "läs mer", "mer info", "mer information", "denna länk"},
	"pl": {"kliknij tutaj", "tutaj", "więcej", "czytaj więcej", "dowiedz się więcej", "ten link"},
	"ru": {"нажмите здесь", "здесь", "подробнее", "читать далее", "ещё", "еще", "больше", "эта ссылка"},
	"ja": {"ここをクリック", "こちらをクリック", "こちら", "ここ", "リンク", "続きを読む", "続く", "全文表示", "もっと見る", "詳細",
		"詳しくはこちら"},
	"zh": {"点击这里", "点击此处", "这里", "更多", "了解更多", "阅读更多", "详情", "點擊這裡", "這裡"},
	"ko": {"여기", "여기를 클릭", "클릭", "링크", "자세히", "자세히 보기", "더 보기", "계속", "이동", "전체 보기"},
	"ta": {"இங்கே கிளிக் செய்யவும்", "தயவுசெய்து இங்கே அழுத்தவும்", "மேலும் அறிக", "மேலும் தகவலுக்கு", "மேலும் தரவுகளுக்கு",
		"மேலும் படிக்க", "மேலும்", "அடுத்த பக்கம்", "மறுபக்கம்", "முந்தைய பக்கம்", "முன்பக்கம்"},
	"fa": {"اینجا", "اینجا کلیک کنید", "اینجا بزنید", "بیشتر", "بیشتر بخوانید", "بیشتر بدانید", "اطلاعات بیشتر", "اطلاعات",
		"این", "برو", "شروع"},
}

// vagueIndex maps each language to its phrases as a set, and "" to all of them.
var vagueIndex = func() map[string]map[string]bool {
	m := map[string]map[string]bool{"": {}}
	for lang, phrases := range vagueLinkTexts {
		set := map[string]bool{}
		for _, p := range phrases {
			set[p] = true
			m[""][p] = true
		}
		m[lang] = set
	}
	return m
}()

// maxVagueRunes bounds the texts compared: every phrase is shorter.
const maxVagueRunes = 32

// isNonDescriptive reports whether a link text is one of the vague phrases
// of lang's primary subtag, or of any language when lang has no list.
// Case, surrounding spaces and trailing punctuation or arrows are ignored.
func isNonDescriptive(text, lang string) bool {
	if text == "" || len(text) > 4*maxVagueRunes {
		return false
	}
	t := strings.TrimRightFunc(strings.ToLower(text), func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
	})
	t = strings.TrimLeftFunc(t, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsSymbol(r) })
	if t == "" {
		return false
	}
	set, ok := vagueIndex[primaryTag(lang)]
	if !ok {
		set = vagueIndex[""]
	}
	return set[t]
}

// primaryTag is the primary language subtag of a lang value, lower-case
// ("de" of "de-CH").
func primaryTag(lang string) string {
	primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(lang)), "-")
	primary, _, _ = strings.Cut(primary, "_")
	return primary
}
