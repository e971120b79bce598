package policy

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// robotsGen generates robots.txt files and paths from the pieces on which
// Google's parser and RFC 9309 are known to part: interleaved records,
// misspelled and colon-less names, blanks other than space and tab, stray
// and lower-case escapes, raw non-ASCII bytes, NUL bytes, Google's
// index.html rule, and lines longer than Google reads.
type robotsGen struct {
	r *rand.Rand
	// patterns are the patterns of the file being generated, for paths
	// that match them.
	patterns []string
}

func (g *robotsGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

// blank is what stands around a colon or at a line's end.
func (g *robotsGen) blank() string {
	return g.pick("", "", " ", " ", "\t", "\v", "\f", " \v", "\u00a0")
}

func (g *robotsGen) agentLine() string {
	name := g.pick("User-agent", "user-agent", "USER-AGENT", "User-Agent", "Useragent", "User agent", "User-agents")
	value := g.pick("LektaBot", "lektabot", "LektaBot/0.1", "LektaBot-News", "Lekta", "*", "* extra", "OtherBot", "LektaBot*", "*Bot")
	if g.r.IntN(8) == 0 {
		return name + " " + value // no colon
	}
	return name + g.blank() + ":" + g.blank() + value + g.blank()
}

func (g *robotsGen) pattern() string {
	var b strings.Builder
	b.WriteString(g.pick("/", "/", "/", "*", "", "a", "/*"))
	for n := g.r.IntN(4); n > 0; n-- {
		b.WriteString(g.pick("a", "b", "x/", "/", "*", "%e3", "%E3", "%83%84", "%62", "%61", "%2F", "%2f", "%", "%e*",
			"ツ", "é", " ", "\v", "\x00", "$", "index.html", "index.htm", "?", "?q=1", "&", ";", "~", "%7E",
			"|", "^", "{", "}", "`", `"`, "<", ">", "'", "%7C", "%7c", "%5E", "=", "%3D", "%3d"))
	}
	if g.r.IntN(6) == 0 {
		b.WriteString("$")
	}
	g.patterns = append(g.patterns, b.String())
	return b.String()
}

func (g *robotsGen) ruleLine() string {
	name := g.pick("Disallow", "disallow", "Allow", "allow", "Dissallow", "Disalow", "Disallowed", "Allowed", "DISALLOW")
	if g.r.IntN(8) == 0 {
		return name + " " + strings.ReplaceAll(g.pattern(), " ", "") // no colon
	}
	return name + g.blank() + ":" + g.blank() + g.pattern() + g.blank()
}

// otherLine is a line that is no Allow, Disallow or User-agent line in any reading.
func (g *robotsGen) otherLine() string {
	return g.pick("Sitemap: https://e.example/s.xml", "Crawl-delay: 5", "Host: e.example", "Noindex: /a",
		"Foo: bar", "Content-Signal: search=yes", "garbled line", "this is garbage", "# comment", "", ": /a",
		"Clean-param: x", "Request-rate: 1/5")
}

func (g *robotsGen) line() string {
	var l string
	switch k := g.r.IntN(10); {
	case k < 3:
		l = g.agentLine()
	case k < 7:
		l = g.ruleLine()
	default:
		l = g.otherLine()
	}
	switch g.r.IntN(20) {
	case 0:
		l += "\x00" + g.ruleLine() // what follows a NUL
	case 1:
		l += " # " + g.pattern()
	}
	return l
}

// file is a robots.txt of up to 12 lines; now and then one rule is longer
// than Google's line limit.
func (g *robotsGen) file() string {
	g.patterns = g.patterns[:0]
	var b strings.Builder
	if g.r.IntN(10) == 0 {
		b.WriteString(g.pick("\xEF\xBB\xBF", "\xEF\xBB", "\xEF"))
	}
	eol := g.pick("\n", "\n", "\r\n", "\r")
	for n := 1 + g.r.IntN(12); n > 0; n-- {
		b.WriteString(g.line())
		b.WriteString(eol)
	}
	if g.r.IntN(40) == 0 {
		long := "/" + strings.Repeat("a", gmMaxLineLen-9+g.r.IntN(16)) + "/q"
		g.patterns = append(g.patterns, long)
		b.WriteString(g.pick("Disallow", "Allow") + ": " + long + eol)
	}
	return b.String()
}

// path is a request path as Decide receives it: half of them made from a
// pattern of the file, so that rules match; a long one matches the long
// rules.
func (g *robotsGen) path() string {
	if len(g.patterns) > 0 && g.r.IntN(2) == 0 {
		return g.pathFrom(g.patterns[g.r.IntN(len(g.patterns))])
	}
	if g.r.IntN(30) == 0 {
		return "/" + strings.Repeat("a", gmMaxLineLen-9+g.r.IntN(16)) + g.pick("", "/", "/q", "/f")
	}
	var b strings.Builder
	b.WriteString("/")
	for n := g.r.IntN(4); n > 0; n-- {
		b.WriteString(g.pick("a", "b", "x/", "/", "%E3", "%e3", "%83%84", "%62", "b", "%2F", "%2f", "%25", "ツ",
			"%20", "$", "index.html", "index.htm", "~", "%7E", "q", "|", "^", "{", "`", `"`, "<", "'", "%7C", "%7c",
			"%5E", "%3D", "=", "ü", "%C3%BC", "%c3%bc"))
	}
	if g.r.IntN(5) == 0 {
		b.WriteString(g.pick("?q=1", "?", "?a&b", "?q=a|b", "?q=a%7Cb", "?q='<", "?q=%27%3C", "?q=é", "?q=%C3%A9"))
	}
	return b.String()
}

// pathFrom makes a path the pattern matches, or nearly: wildcards filled,
// the end anchor and what follows a NUL dropped, escapes spelled anew.
func (g *robotsGen) pathFrom(pattern string) string {
	pattern, _, _ = strings.Cut(pattern, "\x00")
	pattern = strings.TrimSuffix(pattern, "$")
	var b strings.Builder
	if !strings.HasPrefix(pattern, "/") {
		b.WriteString("/")
	}
	for _, c := range []byte(pattern) {
		switch {
		case c == '*':
			b.WriteString(g.pick("", "a", "x/", "%62"))
		case c == ' ' || c == '\v':
			b.WriteString(g.pick("%20", "%0B", string(c)))
		default:
			b.WriteByte(c)
		}
	}
	if g.r.IntN(3) == 0 {
		b.WriteString(g.pick("", "/", "b", "?q", "%7E", "ツ"))
	}
	p := b.String()
	switch g.r.IntN(4) {
	case 0:
		p = strings.ToLower(p)
	case 1:
		p = strings.ReplaceAll(p, "%62", "b")
	}
	if strings.HasPrefix(p, "/robots.txt") {
		p = "/x" + p
	}
	return p
}

// diffCounts are the differential's findings.
type diffCounts struct {
	pairs int
	// looser: Lekta allows what Google's matcher disallows, on the path
	// as sent or in its raw spelling (every ASCII byte Chromium escapes
	// written raw). A spelling that mixes both forms of one byte ("/a%5E^")
	// is not compared: Google's matcher answers its spellings differently,
	// Lekta answers the request.
	looser int
	// stricter: Lekta disallows what Google allows on the path as sent.
	stricter int
	// split: two spellings of one request (the same bytes on the wire)
	// answered differently.
	split    int
	examples []string
}

// differential decides every pair with Lekta and with the model of
// Google's matcher, and decides a second spelling of each request, keeping
// a few examples of what it finds.
func differential(files, pathsPerFile int, seed uint64) diffCounts {
	g := &robotsGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	var c diffCounts
	for range files {
		body := g.file()
		r := ParseRobots([]byte(body))
		for range pathsPerFile {
			path := g.path()
			c.pairs++
			lekta := decideTyped(r, path)
			sent := SpellTarget(path)
			googleSent := googleModelAllowed([]byte(body), "LektaBot", "http://e.example"+sent)
			googleRaw := googleModelAllowed([]byte(body), "LektaBot", "http://e.example"+rawSpelling(sent))
			switch {
			case lekta && (!googleSent || !googleRaw):
				c.looser++
				if len(c.examples) < 5 {
					c.examples = append(c.examples, fmt.Sprintf("path %.80q (sent %.80q) in\n%.600q", path, sent, body))
				}
			case !lekta && googleSent:
				c.stricter++
			}
			if other := respell(path); SpellTarget(other) == sent && decideTyped(r, other) != lekta {
				c.split++
				if len(c.examples) < 5 {
					c.examples = append(c.examples, fmt.Sprintf("%.80q and %.80q, both sent as %.80q, answered differently in\n%.600q", path, other, sent, body))
				}
			}
		}
	}
	return c
}

// decideTyped is Lekta's answer for a URL typed with path, through the
// same entry point as a submitted URL: parsed, then decided on the
// request as sent.
func decideTyped(r *Robots, path string) bool {
	u, err := url.Parse("http://e.example" + path)
	if err != nil {
		return r.Decide("LektaBot", path).Allowed
	}
	return r.DecideURL("LektaBot", u).Allowed
}

// respell writes path another way that Chromium sends alike: every raw
// byte it escapes escaped, and every upper-case escape of such a byte
// written raw.
func respell(path string) string {
	var b strings.Builder
	query := false
	for i := 0; i < len(path); i++ {
		c := path[i]
		query = query || c == '?'
		if v, ok := hexByte(path, i); ok && isUpperHex(path[i+1]) && isUpperHex(path[i+2]) &&
			(v >= 0x80 || (v > 0x20 && v != 0x7f && escapedByChromium(v, query))) {
			b.WriteByte(v)
			i += 2
			continue
		}
		if c >= 0x80 || (c != '?' && c != '%' && escapedByChromium(c, query)) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// TestRobotsDifferentialGoogle: on 24,000 generated (robots.txt, path)
// pairs, LektaBot never allows what Google's matcher disallows, on the
// path as typed or as sent, and two spellings of one request always get
// one answer. The pairs where LektaBot is stricter (RFC 9309 reading
// disallows, Google allows) are expected and logged.
func TestRobotsDifferentialGoogle(t *testing.T) {
	t.Parallel()
	c := differential(4000, 6, 22)
	t.Logf("%d pairs: Lekta allows and Google disallows %d, Lekta disallows and Google allows %d, same request different answer %d",
		c.pairs, c.looser, c.stricter, c.split)
	if c.pairs < 20000 {
		t.Fatalf("only %d pairs", c.pairs)
	}
	if c.looser > 0 || c.split > 0 {
		t.Errorf("%d of %d pairs: Lekta allows what Google's matcher disallows; %d: one request, two answers; for example:\n%s",
			c.looser, c.pairs, c.split, strings.Join(c.examples, "\n"))
	}
}

// FuzzRobotsGoogle: for any file and path, LektaBot never allows what the
// model of Google's matcher disallows.
func FuzzRobotsGoogle(f *testing.F) {
	for _, tc := range referenceCases() {
		if len(tc.body) < 4096 {
			f.Add([]byte(tc.body), gmPathParamsQuery(tc.url))
		}
	}
	f.Add([]byte("User-agent: LektaBot\nSitemap: https://e.example/s.xml\nUser-agent: OtherBot\nDisallow: /x\n"), "/x")
	f.Add([]byte("User-agent: *\nDisallow:\v/x\n"), "/x")
	f.Add([]byte("User-agent: *\nDisallow: /%e*3%83%84\n"), "/%e3%83%84")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		if len(body) > 64<<10 || strings.ContainsAny(path, "#") {
			return
		}
		if path == "" || path[0] != '/' {
			path = "/" + path
		}
		if isRobotsTxtPath(normalisePathQuery(path)) {
			return // RFC 9309 §2.2.2: always allowed, whatever Google says
		}
		if ParseRobots(body).Decide("LektaBot", path).Allowed && !googleModelAllowed(body, "LektaBot", "http://e.example"+path) {
			t.Fatalf("Lekta allows %q, Google's matcher disallows it", path)
		}
	})
}
