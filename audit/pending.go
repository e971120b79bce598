package audit

import (
	"fmt"
	"strings"

	"lekta.dev/lekta/cache"
)

// WaitReason says in words why an audit of a site waits for a later
// start, given the per-host limit that put it off ("concurrency", a window
// such as "1/1m"): "the site was audited less than a minute ago (LektaBot
// starts at most 1 audit a minute per site)". Empty for no limit.
func WaitReason(limit string) string {
	switch limit {
	case "":
		return ""
	case cache.ReasonConcurrency:
		return "another audit of the site is running (LektaBot audits a site one page at a time)"
	case cache.ReasonReserved:
		return "the start reserved for it has not come yet"
	}
	ws, err := cache.ParseWindows(limit)
	if err != nil || len(ws) != 1 {
		return "the per-host limits put it off (" + limit + ")"
	}
	w := ws[0]
	span := per(w.Per)
	rate := "every " + span
	last := span
	if a, ok := strings.CutPrefix(span, "a "); ok {
		rate, last = span, a
	} else if a, ok := strings.CutPrefix(span, "an "); ok {
		rate, last = span, a
	}
	audits := "audits"
	if w.N == 1 {
		audits = "audit"
	}
	most := fmt.Sprintf("LektaBot starts at most %d %s %s per site", w.N, audits, rate)
	if w.N == 1 {
		return "the site was audited less than " + span + " ago (" + most + ")"
	}
	return fmt.Sprintf("the site was audited %d times in the last %s (%s)", w.N, last, most)
}
