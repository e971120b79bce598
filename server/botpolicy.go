package server

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"time"

	"lekta.dev/lekta/compare"
)

// PolicyChange is one entry of the bot policy's change log.
type PolicyChange struct {
	Version string
	Date    time.Time
	What    string
}

// policyChanges reads web/bot-changes.txt, the dated log of LektaBot's
// behaviour: newest first, the first entry being the policy in force.
func policyChanges() ([]PolicyChange, error) {
	b, err := webFS.ReadFile("web/bot-changes.txt")
	if err != nil {
		return nil, err
	}
	var out []PolicyChange
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("bot-changes.txt line %d: want version | date | what changed", n)
		}
		d, err := time.Parse(time.DateOnly, strings.TrimSpace(parts[1]))
		if err != nil {
			return nil, fmt.Errorf("bot-changes.txt line %d: %w", n, err)
		}
		c := PolicyChange{Version: strings.TrimSpace(parts[0]), Date: d, What: strings.TrimSpace(parts[2])}
		if len(out) > 0 && c.Date.After(out[len(out)-1].Date) {
			return nil, fmt.Errorf("bot-changes.txt line %d: entries must be newest first", n)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bot-changes.txt has no entry")
	}
	return out, nil
}

// botPageView is what bot.html renders: the policy in force and what this
// instance measured.
type botPageView struct {
	botView
	// PolicyVersion and InForce are the newest change log entry's.
	PolicyVersion, InForce string
	Changes                []changeView
	// Typical is the typical audit duration: measured here (p50 to p95 of
	// the recent audits) once there are enough, else the configured bounds.
	Typical          string
	TypicalMeasured  bool
	TypicalCount     int
	AllowExample     string
	CrawlDelayWindow string
	// VerifyURL is the address of /bot/verify, absolute with a public URL.
	VerifyURL string
}

type changeView struct{ Version, Date, What string }

// botPage serves /bot from the policy in force.
func botPage(pg *pages, p Policy, link func(path string) string, d *durations) (http.Handler, error) {
	changes, err := policyChanges()
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := botPageView{botView: p.view(), PolicyVersion: changes[0].Version, InForce: changes[0].Date.Format(time.DateOnly)}
		for _, c := range changes {
			v.Changes = append(v.Changes, changeView{c.Version, c.Date.Format(time.DateOnly), c.What})
		}
		p50, p95, n, measured := d.spread()
		v.Typical, v.TypicalMeasured, v.TypicalCount = compare.Duration(p50)+" to "+compare.Duration(p95), measured, n
		v.VerifyURL = link("/bot/verify")
		v.AllowExample = "User-agent: " + v.Token + "\nDisallow: /admin/\nDisallow: /checkout/\nAllow: /\n"
		if len(v.Windows) > 0 {
			v.CrawlDelayWindow = v.Windows[0]
		}
		pg.render(w, r, http.StatusOK, "bot", v)
	}), nil
}
