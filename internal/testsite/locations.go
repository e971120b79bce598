package testsite

import "strings"

// LocationSpelling is one way of writing a redirect's Location that a
// browser reads as an ordinary URL of the same site. SECURITY.md lists
// every one (the raw-Location table of §6), and the render lane's redirect
// cap is tested with each.
type LocationSpelling struct {
	// Name is how SECURITY.md names the spelling.
	Name string
	// Spell writes the Location that leads from dir+"/"+from to
	// dir+"/"+to on scheme://host (host with its port when it is not the
	// scheme's default), perhaps followed by one more segment or a query.
	// dir starts with "/", from and to are one segment of digits.
	Spell func(scheme, host, dir, from, to string) string
}

// Example is the spelling of a hop from /r/7 to /r/6 on http://shop.example.
func (l LocationSpelling) Example() string {
	return l.Spell("http", "shop.example", "/r", "7", "6")
}

// backslashes writes p with backslashes for slashes.
func backslashes(p string) string { return strings.ReplaceAll(p, "/", `\`) }

// LocationSpellings are the raw-Location spellings of SECURITY.md §6.
var LocationSpellings = []LocationSpelling{
	{"absolute path", func(_, _, d, _, to string) string { return d + "/" + to }},
	{"absolute URL", func(s, h, d, _, to string) string { return s + "://" + h + d + "/" + to }},
	{"scheme-relative", func(_, h, d, _, to string) string { return "//" + h + d + "/" + to }},
	{"relative segment", func(_, _, _, _, to string) string { return to }},
	{"./ segment", func(_, _, _, _, to string) string { return "./" + to }},
	{". segment", func(_, _, d, _, to string) string { return "/." + d + "/" + to }},
	{".. segment", func(_, _, d, _, to string) string { return "/x/.." + d + "/" + to }},
	{"../ from the page", func(_, _, d, _, to string) string { return "../" + d[strings.LastIndex(d, "/")+1:] + "/" + to }},
	{".. above the root", func(_, _, d, _, to string) string { return "/../.." + d + "/" + to }},
	{"%2e segment", func(_, _, d, _, to string) string { return "/%2e" + d + "/" + to }},
	{"%2E segment", func(_, _, d, _, to string) string { return "/%2E" + d + "/" + to }},
	{"%2e%2e segment", func(_, _, d, _, to string) string { return "/x/%2e%2e" + d + "/" + to }},
	{"%2E%2E segment", func(_, _, d, _, to string) string { return "/x/%2E%2E" + d + "/" + to }},
	{".%2e segment", func(_, _, d, _, to string) string { return "/x/.%2e" + d + "/" + to }},
	{"%2e. segment", func(_, _, d, _, to string) string { return "/x/%2e." + d + "/" + to }},
	{"%2e%2E mixed case", func(_, _, d, _, to string) string { return "/x/y/%2e%2E/%2E%2e" + d + "/" + to }},
	{"backslashes", func(_, _, d, _, to string) string { return backslashes(d + "/" + to) }},
	{"backslash and %2e%2e", func(_, _, d, _, to string) string { return backslashes("/x/%2e%2e" + d + "/" + to) }},
	{"slash backslash host", func(_, h, d, _, to string) string { return `/\` + h + d + "/" + to }},
	{"two backslashes host", func(_, h, d, _, to string) string { return `\\` + h + backslashes(d+"/"+to) }},
	{"scheme and backslashes", func(s, h, d, _, to string) string { return s + `:\\` + h + backslashes(d+"/"+to) }},
	{"scheme without slashes", func(s, _, d, _, to string) string { return s + ":" + d + "/" + to }},
	{"scheme and four slashes", func(s, h, d, _, to string) string { return s + ":////" + h + d + "/" + to }},
	{"tab in the path", func(_, _, d, _, to string) string { return d + "/\t" + to }},
	{"tabs in scheme and host", func(s, h, d, _, to string) string {
		return s[:2] + "\t" + s[2:] + "://" + h[:1] + "\t" + h[1:] + d + "/" + to
	}},
	{"upper-case scheme and host", func(s, h, d, _, to string) string { return strings.ToUpper(s+"://"+h) + d + "/" + to }},
	{"default port", func(s, h, d, _, to string) string {
		port := map[string]string{"http": ":80", "https": ":443"}[s]
		if strings.Contains(h, ":") {
			port = ""
		}
		return s + "://" + h + port + d + "/" + to
	}},
	{"percent-encoded host", func(s, h, d, _, to string) string {
		return s + "://%" + strings.ToUpper(hexOf(h[0])) + h[1:] + d + "/" + to
	}},
	{"percent-encoded digit", func(_, _, d, _, to string) string { return d + "/%" + hexOf(to[0]) + to[1:] }},
	{"relative .. segment", func(_, _, d, _, to string) string { return "x/../" + to }},
	{"fragment", func(_, _, d, _, to string) string { return d + "/" + to + "#f" }},
	{"empty query", func(_, _, d, _, to string) string { return d + "/" + to + "?" }},
	{"raw space in the path", inPath("a b")},
	{`raw " in the path`, inPath(`a"b`)},
	{"raw < and > in the path", inPath("a<b>")},
	{"raw backtick in the path", inPath("a`b")},
	{"raw { and } in the path", inPath("a{b}")},
	{"raw ^ in the path", inPath("a^b")},
	{"raw vertical bar in the path", inPath("a|b")},
	{"raw ' in the path", inPath("a'b")},
	{"raw non-ASCII in the path", inPath("caf\u00e9")},
	{"raw 0xFF byte in the path", inPath("a\xffb")},
	{"overlong UTF-8 in the path", inPath("a\xc0\xafb")},
	{"UTF-8 surrogate in the path", inPath("a\xed\xa0\x80b")},
	{"lower-case escape beside a raw byte", inPath("%c3%a9\xfc")},
	{"raw space in the query", inQuery("q=a b")},
	{`raw " in the query`, inQuery(`q=a"b`)},
	{"raw ' in the query", inQuery("q=a'b")},
	{"raw < and > in the query", inQuery("q=a<b>")},
	{"raw backtick in the query", inQuery("q=a`b")},
	{"raw { and } in the query", inQuery("q=a{b}")},
	{"raw ^ in the query", inQuery("q=a^b")},
	{"raw vertical bar in the query", inQuery("q=a|b")},
	{"raw non-ASCII in the query", inQuery("q=caf\u00e9")},
	{"raw 0xFF byte in the query", inQuery("q=a\xffb")},
	{"overlong UTF-8 in the query", inQuery("q=a\xc0\xafb")},
	{"UTF-8 surrogate in the query", inQuery("q=a\xed\xa0\x80b")},
}

// inPath spells an absolute path with seg as one more segment.
func inPath(seg string) func(_, _, _, _, _ string) string {
	return func(_, _, d, _, to string) string { return d + "/" + to + "/" + seg }
}

// inQuery spells an absolute path with query q.
func inQuery(q string) func(_, _, _, _, _ string) string {
	return func(_, _, d, _, to string) string { return d + "/" + to + "?" + q }
}

func hexOf(c byte) string {
	const hex = "0123456789abcdef"
	return string([]byte{hex[c>>4], hex[c&15]})
}
