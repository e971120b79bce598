package render

import (
	"strconv"
	"strings"
	"sync/atomic"
)

// refreshState is the main document's pending refresh, the navigation a
// Refresh response header or <meta http-equiv=refresh> schedules once the
// document has loaded. Chromium starts it from a task of its own, which
// pageStateJS's timer counts cannot see, so the completeness rule asks
// here whether one is still to come.
type refreshState struct {
	// header is the delay in ms of the current main document's Refresh
	// header, -1 when it has none.
	header atomic.Int64
	// refused is set when a main-frame navigation was refused since the
	// current document arrived: the refresh it scheduled has been spent.
	refused atomic.Bool
}

// document records the Refresh header of a new main-frame document.
func (r *refreshState) document(value string) {
	r.header.Store(refreshDelay(value))
	r.refused.Store(false)
}

// apply folds the header's delay into st, which carries the meta refresh
// pageStateJS found, and drops both once a navigation was refused.
func (r *refreshState) apply(st *pageState) {
	if r.refused.Load() {
		st.Refresh = -1
		return
	}
	if h := r.header.Load(); h >= 0 && (st.Refresh < 0 || float64(h) < st.Refresh) {
		st.Refresh = float64(h)
	}
}

// refreshDelay reads the delay of a Refresh value ("5; url=/next") in ms,
// or -1 when it does not start with a number of seconds.
func refreshDelay(v string) int64 {
	v = strings.TrimSpace(v)
	end := strings.IndexFunc(v, func(c rune) bool { return (c < '0' || c > '9') && c != '.' })
	if end < 0 {
		end = len(v)
	}
	s, err := strconv.ParseFloat(v[:end], 64)
	if end == 0 || err != nil || s < 0 {
		return -1
	}
	return int64(s * 1000)
}
