package cache

import (
	"slices"
	"time"
)

// ReserveGrace is how long a reservation outlives the time it was made
// for: a queued audit whose renderer is late keeps its place in the
// host's windows this long, after which its job competes as any other.
const ReserveGrace = 2 * time.Minute

// overrunPoll is the concurrency wait when the running audit has taken
// longer than Limits.Typical: ask again soon, never past its lease.
const overrunPoll = 5 * time.Second

// fits reports whether a start at at keeps every window, given the other
// starts taken (real and reserved, ascending, unix ms): a window N/Per is
// broken when N+1 starts lie within a span shorter than Per, since each
// start occupies [s, s+Per). When it does not fit, reason is the index of
// the first broken window (1-based).
func fits(ws []Window, taken []int64, at int64) (ok bool, reason int) {
	k, _ := slices.BinarySearch(taken, at)
	for wi, w := range ws {
		per := w.Per.Milliseconds()
		// With at inserted at index k, every run of N+1 consecutive starts
		// that contains it: taken[i..i+N-1] plus at, for i in [k-N, k].
		for i := max(0, k-w.N); i <= k; i++ {
			j := i + w.N // index of the run's last start with at inserted
			if j > len(taken) {
				break
			}
			lo, hi := at, at
			if i < k {
				lo = taken[i]
			}
			if j > k {
				hi = taken[j-1]
			}
			if hi-lo < per {
				return false, wi + 1
			}
		}
	}
	return true, 0
}

// earliest is the first time at or after from at which a start fits every
// window given the starts taken (ascending), and the window that delayed it
// longest on its own (0 when it fits at from). A start fits again only once
// some start leaves a window, so the candidates are from and every start
// plus each window's length.
func earliest(ws []Window, taken []int64, from int64) (at int64, reason int) {
	if ok, _ := fits(ws, taken, from); ok {
		return from, 0
	}
	cands := []int64{}
	for _, w := range ws {
		for _, s := range taken {
			if c := s + w.Per.Milliseconds(); c > from {
				cands = append(cands, c)
			}
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	at = from
	for _, c := range cands {
		if ok, _ := fits(ws, taken, c); ok {
			at = c
			break
		}
	}
	// The window that would have delayed it longest alone names the reason.
	var longest int64 = -1
	for i, w := range ws {
		one := []Window{w}
		if ok, _ := fits(one, taken, from); ok {
			continue
		}
		t := from
		for _, c := range cands {
			if ok, _ := fits(one, taken, c); ok {
				t = c
				break
			}
		}
		if t-from > longest {
			longest, reason = t-from, i+1
		}
	}
	return at, reason
}

// hostLease is a live lease as a decision sees it: when its audit started
// and when the lease expires (unix ms).
type hostLease struct {
	start, exp int64
}

// concurrencyWait is how long a new audit of a host whose leases are these
// must wait for the concurrency limit: 0 when there is room, else until the
// earliest running audit is expected to end (its start plus typical), at
// least 1 ms; once it has run longer than that, overrunPoll, never past its
// lease's expiry.
func concurrencyWait(l Limits, leases []hostLease, now int64) int64 {
	if len(leases) < l.Concurrency {
		return 0
	}
	first := leases[0]
	for _, hl := range leases[1:] {
		if hl.start < first.start {
			first = hl
		}
	}
	wait := first.start + l.typical() - now
	if wait <= 0 {
		wait = overrunPoll.Milliseconds()
	}
	return max(min(wait, first.exp-now), 1)
}

// reservation is a start that a queued audit of a URL (its hash) holds
// for later, and the id that reserved it.
type reservation struct {
	id, hash string
	at       int64
}

// plan is the decision Reserve makes for a host once the URL is neither
// cached nor running: when the reserving audit can start (at or after now)
// given the real starts, the other reservations (those whose time has
// passed count as starting now) and the leases. refused is set when that is
// later than within from now; wait is then the time until a reservation
// would be accepted, and reason the constraint (0 concurrency, i the i-th
// window).
func plan(l Limits, starts []int64, others []reservation, leases []hostLease, now int64, within time.Duration) (at, wait int64, reason int, refused bool) {
	taken := slices.Clone(starts)
	for _, r := range others {
		taken = append(taken, max(r.at, now))
	}
	slices.Sort(taken)
	from := now
	if cw := concurrencyWait(l, leases, now); cw > 0 {
		from, reason = now+cw, 0
	}
	at, wr := earliest(padded(l.Windows, l.StartSlack), taken, from)
	if wr > 0 {
		reason = wr
	}
	if limit := within.Milliseconds(); at-now > limit {
		return at, max(at-now-limit, 1000), reason, true
	}
	return at, 0, reason, false
}

// reservedAt is Reserve's answer for a start held at at: Reason names the
// constraint that put it off (plan's reason) when that is later than now.
func reservedAt(l Limits, at, now int64, reason int) Admission {
	a := Admission{Decision: Reserved, StartsAt: time.UnixMilli(at)}
	if at > now {
		a.Reason = l.reason(reason)
	}
	return a
}

// padded is ws with each window slack longer: reserved starts keep that
// much more than a window apart, for the time an audit's first request
// takes to reach the site after its admission.
func padded(ws []Window, slack time.Duration) []Window {
	if slack <= 0 {
		return ws
	}
	out := make([]Window, len(ws))
	for i, w := range ws {
		out[i] = Window{N: w.N, Per: w.Per + slack}
	}
	return out
}

// admitWait is the decision Admit makes for a host once the URL is neither
// cached nor running: 0 when a start now keeps every limit, else how long
// to wait and the constraint that says so (0 concurrency, i the i-th
// window). The other audits' live reservations count as starts at their
// reserved times, so that nobody takes a start a queued audit was promised;
// an audit that holds a reservation itself (own ≥ 0) counts only those
// ahead of it in line (reserved no later than own), so that one running
// late goes first and those behind it move back; it starts no sooner than
// own, and keeps Limits.StartSlack beyond the windows, as Reserve does.
func admitWait(l Limits, starts []int64, others []reservation, own int64, leases []hostLease, now int64) (wait int64, reason int) {
	taken := slices.Clone(starts)
	for _, r := range others {
		if own < 0 || r.at <= own {
			taken = append(taken, r.at)
		}
	}
	slices.Sort(taken)
	wait, reason = -1, -1
	if cw := concurrencyWait(l, leases, now); cw > 0 {
		wait, reason = cw, 0
	}
	ws := l.Windows
	if own >= 0 {
		ws = padded(ws, l.StartSlack) // the slack Reserve planned holds here too
	}
	if ok, _ := fits(ws, taken, now); !ok {
		at, wr := earliest(ws, taken, now)
		if at-now > wait {
			wait, reason = at-now, wr
		}
	}
	// A reserved audit starts no sooner than its reservation, which keeps
	// the planned slack beyond the windows.
	if own > now && own-now > wait {
		wait, reason = own-now, len(l.Windows)+1
	}
	if reason < 0 {
		return 0, -1
	}
	return wait, reason
}
