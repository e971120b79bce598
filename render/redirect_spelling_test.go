package render

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
)

// The tests of this file redirect every kind of subresource through chains
// whose Location is written in each spelling of testsite.LocationSpellings
// and check, in the test site's own log, that the render lane follows at
// most MaxRedirects hops of each chain, and that ResolveLocation reads each
// spelling as Chromium does.

// chainStart is the length of the spelled chains: longer than the cap,
// longer than Chromium's own 20.
const chainStart = 25

// chainKinds are the subresource kinds a spelled chain is requested as:
// the page markup (%[1]s: the chain's URL) and the body its last hop serves.
var chainKinds = []struct {
	name, markup, contentType, body string
}{
	{"script", `<script src="%[1]s"></script>`, "text/javascript", `void 0;`},
	{"stylesheet", `<link rel=stylesheet href="%[1]s">`, "text/css", `p { color: red }`},
	{"fetch", `<script>fetch("%[1]s").catch(() => {});</script>`, "application/json", `{}`},
	{"xhr", `<script>{ const x = new XMLHttpRequest(); x.open("GET", "%[1]s"); x.send(); }</script>`, "application/json", `{}`},
	{"import", `<script>import("%[1]s").catch(() => {});</script>`, "text/javascript", `export default 1;`},
	{"modulepreload", `<link rel=modulepreload href="%[1]s">`, "text/javascript", `export default 1;`},
	{"worker", `<script>new Worker("%[1]s");</script>`, "text/javascript", `void 0;`},
	{"sharedworker", `<script>new SharedWorker("%[1]s");</script>`, "text/javascript", `void 0;`},
	{"eventsource", `<script>new EventSource("%[1]s");</script>`, "text/event-stream", "data: end\n\n"},
}

// spelledChain is the path of hop n of chain tag; the tag names the
// spelling and kind, "KIND-SPELLING-...".
func spelledChain(tag string, n int) string { return "/rc/" + tag + "/" + strconv.Itoa(n) }

// serveSpelledChain answers /rc/TAG/N: a redirect to hop N-1 in the
// spelling the tag names, or at N = 0 the body of the kind it names.
func serveSpelledChain(w http.ResponseWriter, r *http.Request) {
	tag, n, ok := chainHop(r.URL.Path)
	parts := strings.Split(tag, "-")
	if !ok || len(parts) < 2 {
		http.NotFound(w, r)
		return
	}
	kind, spelling := parts[0], parts[1]
	i, err := strconv.Atoi(spelling)
	if err != nil || i < 0 || i >= len(testsite.LocationSpellings) {
		http.NotFound(w, r)
		return
	}
	if n > 0 {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		loc := testsite.LocationSpellings[i].Spell(scheme, r.Host, "/rc/"+tag, strconv.Itoa(n), strconv.Itoa(n-1))
		w.Header()["Location"] = []string{loc}
		w.WriteHeader(http.StatusFound)
		return
	}
	for _, k := range chainKinds {
		if k.name == kind {
			w.Header().Set("Content-Type", k.contentType)
			fmt.Fprint(w, k.body)
			return
		}
	}
	http.NotFound(w, r)
}

// chainHop reads the tag and hop number of a spelled chain's path,
// "/rc/TAG/N" followed by anything a spelling adds.
func chainHop(path string) (tag string, n int, ok bool) {
	rest, ok := strings.CutPrefix(path, "/rc/")
	if !ok {
		return "", 0, false
	}
	tag, rest, _ = strings.Cut(rest, "/")
	num, _, _ := strings.Cut(rest, "/")
	n, err := strconv.Atoi(num)
	return tag, n, err == nil
}

// waitForQuietLog waits until the site logged nothing new for host for a
// while (or ctx ends): the page's chains have run their course.
func waitForQuietLog(s *site, host string) func(context.Context, *tab) {
	return func(ctx context.Context, _ *tab) {
		last, since := -1, time.Now()
		for ctx.Err() == nil {
			n := len(s.hitsFor(host))
			if n != last {
				last, since = n, time.Now()
			}
			if time.Since(since) > 500*time.Millisecond {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestRenderRedirectCapForEverySpelling: for every subresource kind, on
// http and https, pages start one 25-hop chain per Location spelling; the
// site must log at most 6 requests of each chain (the first and 5
// redirects), and at least the first. A page starts at most
// spellingsPerPage chains, so the audit's request budget never binds: a
// chain that runs past the cap is seen as such, not cut by the budget.
func TestRenderRedirectCapForEverySpelling(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	for _, kind := range chainKinds {
		for _, scheme := range []string{"http", "https"} {
			for first := 0; first < len(testsite.LocationSpellings); first += spellingsPerPage {
				last := min(first+spellingsPerPage, len(testsite.LocationSpellings))
				t.Run(fmt.Sprintf("%s/%s/%d-%d", kind.name, scheme, first, last-1), func(t *testing.T) {
					t.Parallel()
					checkSpelledChains(t, b, s, kind.markup, scheme, kind.name, first, last)
				})
			}
		}
	}
}

// spellingsPerPage is how many spelled chains one page starts: capped,
// they make 6 requests each, well inside the request budget, and six
// chains that ran on to 20 hops would use it up, which the test reports.
const spellingsPerPage = DefaultMaxRequests / 10

// checkSpelledChains renders a page that starts the chains of spellings
// [first, last) as kind and checks each in the site's log.
func checkSpelledChains(t *testing.T, b *Browser, s *site, markup, scheme, kind string, first, last int) {
	host := hostFor(t)
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	tags := make(map[int]string)
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><title>spelled chains</title><p id=out>chains</p>\n")
	for i := first; i < last; i++ {
		tags[i] = fmt.Sprintf("%s-%d-%s-%s", kind, i, scheme, nonce)
		fmt.Fprintf(&page, markup+"\n", spelledChain(tags[i], chainStart))
	}
	req := Request{afterSettle: withTimeout(10*time.Second, waitForQuietLog(s, host))}
	snap, err := renderTestPage(t, b, s, scheme+"://"+host, page.String(), req)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if n := snap.Render.Blocked[ReasonBudget]; n > 0 {
		t.Errorf("the request budget refused %d requests: chains ran past the cap", n)
	}
	for i := first; i < last; i++ {
		sp := testsite.LocationSpellings[i]
		n := len(s.hitsMatching(func(h hit) bool { return h.Host == host && strings.HasPrefix(h.Path, "/rc/"+tags[i]+"/") }))
		switch {
		case n > 1+MaxRedirects:
			t.Errorf("%s-%d (%s): the site logged %d requests of the chain, want at most %d", kind, i, sp.Name, n, 1+MaxRedirects)
		case n == 0:
			t.Errorf("%s-%d (%s): the site logged no request of the chain: the page never started it", kind, i, sp.Name)
		}
	}
}

// TestResolveLocationAgreesWithChromium: Chromium follows one redirect in
// each spelling; the URL the site then receives is the one ResolveLocation
// gives for the Location.
func TestResolveLocationAgreesWithChromium(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			host := hostFor(t)
			nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
			var page strings.Builder
			page.WriteString("<!DOCTYPE html><title>one hop</title><p id=out>hops</p><script>\n")
			tags := make([]string, len(testsite.LocationSpellings))
			for i := range testsite.LocationSpellings {
				tags[i] = fmt.Sprintf("fetch-%d-%s-%s", i, scheme, nonce)
				fmt.Fprintf(&page, "fetch(%q).catch(() => {});\n", spelledChain(tags[i], 1))
			}
			page.WriteString("</script>")
			req := Request{afterSettle: withTimeout(10*time.Second, waitForQuietLog(s, host))}
			if _, err := renderTestPage(t, b, s, scheme+"://"+host, page.String(), req); err != nil {
				t.Fatalf("render: %v", err)
			}
			for i, sp := range testsite.LocationSpellings {
				var arrived []string
				for _, h := range s.hitsMatching(func(h hit) bool { return h.Host == host && strings.HasPrefix(h.Path, "/rc/"+tags[i]+"/") }) {
					if _, n, _ := chainHop(h.Path); n != 1 {
						arrived = append(arrived, scheme+"://"+host+h.URI)
					}
				}
				from := scheme + "://" + host + spelledChain(tags[i], 1)
				loc := sp.Spell(scheme, host, "/rc/"+tags[i], "1", "0")
				got, err := policy.ResolveLocation(from, loc)
				switch {
				case len(arrived) != 1:
					t.Errorf("%s (%q): Chromium requested %q after the redirect, want one request", sp.Name, loc, arrived)
				case err != nil:
					t.Errorf("%s: ResolveLocation(%q, %q): %v; Chromium requested %s", sp.Name, from, loc, err, arrived[0])
				case got != arrived[0]:
					t.Errorf("%s: ResolveLocation(%q, %q) = %s, Chromium requested %s", sp.Name, from, loc, got, arrived[0])
				}
			}
		})
	}
}

// TestSecurityListsLocationSpellings: SECURITY.md's raw-Location table
// (§6) lists exactly the spellings the redirect tests use.
func TestSecurityListsLocationSpellings(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| ") && (strings.Contains(line, "| `\"") || strings.Contains(line, "| `` \"")) {
			rows++
		}
	}
	for _, sp := range testsite.LocationSpellings {
		if row := securityRow(sp); !strings.Contains(string(doc), row) {
			t.Errorf("SECURITY.md lacks the row %s", row)
		}
	}
	if rows != len(testsite.LocationSpellings) {
		t.Errorf("SECURITY.md's raw-Location table has %d rows, the tests use %d spellings", rows, len(testsite.LocationSpellings))
	}
}

// securityRow is the spelling's row in SECURITY.md's table: the example
// Go-quoted in a code span, its "|" escaped for the table, between double
// backticks when it holds one.
func securityRow(sp testsite.LocationSpelling) string {
	code := strings.ReplaceAll(strconv.Quote(sp.Example()), "|", `\|`)
	if strings.Contains(code, "`") {
		code = "`` " + code + " ``"
	} else {
		code = "`" + code + "`"
	}
	return "| " + sp.Name + " | " + code + " |"
}
