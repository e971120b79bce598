package policy

import (
	mathrand "math/rand"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/quick"
)

// interleaved is a robots.txt of groups whose runs of User-agent lines
// have other records between them and after, a path to decide, and a line
// that is no rule (in any reading) to add inside one of the runs.
type interleaved struct {
	lines []string
	runs  []int // indexes of lines i where lines[i-1] and lines[i] are User-agent lines of one run
	path  string
	extra string
	at    int // which of runs gets extra
}

// Generate implements quick.Generator.
func (interleaved) Generate(r *mathrand.Rand, _ int) reflect.Value {
	g := &robotsGen{r: rand.New(rand.NewPCG(r.Uint64(), r.Uint64()))}
	var f interleaved
	for groups := 1 + g.r.IntN(4); groups > 0; groups-- {
		for agents := 1 + g.r.IntN(3); agents > 0; agents-- {
			if agents > 0 && len(f.lines) > 0 && isAgentLine(f.lines[len(f.lines)-1]) {
				f.runs = append(f.runs, len(f.lines))
			}
			f.lines = append(f.lines, g.agentLine())
			if g.r.IntN(3) == 0 {
				f.lines = append(f.lines, g.otherLine())
			}
		}
		for rules := g.r.IntN(4); rules > 0; rules-- {
			f.lines = append(f.lines, g.ruleLine())
			if g.r.IntN(3) == 0 {
				f.lines = append(f.lines, g.otherLine())
			}
		}
	}
	f.path = g.path()
	f.extra = g.otherLine()
	if len(f.runs) > 0 {
		f.at = f.runs[g.r.IntN(len(f.runs))]
	}
	return reflect.ValueOf(f)
}

// isAgentLine reports whether a generated line is a User-agent line in
// some spelling.
func isAgentLine(l string) bool {
	return strings.HasPrefix(strings.ToLower(l), "user")
}

// TestRobotsNonRuleLinesKeepDisallows: adding a line that is no rule
// (Sitemap, Crawl-delay, Host, an unknown name, garbage, a comment, a
// blank line) between the User-agent lines of a group never turns a
// disallowed path into an allowed one (issue 22), in files with records
// interleaved everywhere.
func TestRobotsNonRuleLinesKeepDisallows(t *testing.T) {
	t.Parallel()
	tried := 0
	prop := func(f interleaved) bool {
		if len(f.runs) == 0 {
			return true
		}
		tried++
		before := ParseRobots([]byte(strings.Join(f.lines, "\n"))).Decide("LektaBot", f.path)
		lines := append(append(append([]string(nil), f.lines[:f.at]...), f.extra), f.lines[f.at:]...)
		after := ParseRobots([]byte(strings.Join(lines, "\n"))).Decide("LektaBot", f.path)
		if !before.Allowed && after.Allowed {
			t.Logf("adding %q as line %d turned %q from disallowed (%+v) to allowed (%+v):\n%s",
				f.extra, f.at+1, f.path, before, after, strings.Join(lines, "\n"))
			return false
		}
		return true
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 4000, Rand: mathrand.New(mathrand.NewSource(22))}); err != nil {
		t.Error(err)
	}
	if tried < 1000 {
		t.Errorf("only %d files had a run of User-agent lines to add to", tried)
	}
}
