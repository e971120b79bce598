package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"lekta.dev/lekta/compare"
)

// Bounds of what the recorder keeps and hands over.
const (
	// maxWrites caps the writes the recorder keeps per document; later
	// ones go unrecorded (and their content unattributed).
	maxWrites = 2000
	// recorderFrames is how many frames with a script URL a stack keeps.
	recorderFrames = 12
	// maxScripts and maxStacks cap the distinct script URLs and stacks.
	maxScripts = 128
	maxStacks  = 512
	// maxRecorded bounds the recorder's answer in bytes; a longer one is
	// the page's doing.
	maxRecorded = 4 << 20
	// readCausesTimeout bounds the wait for the recorder's answer.
	readCausesTimeout = 2 * time.Second
)

// recorderSource is recorderJS for the tab.
func (t *tab) recorderSource() string {
	return fmt.Sprintf(recorderJS, t.bindingName, t.readEvent, maxWrites, recorderFrames, maxScripts, maxStacks)
}

// recorded is what recorderJS answers.
type recorded struct {
	Doc     string   `json:"doc"`
	Scripts []string `json:"scripts"`
	// Stacks are flat lists of script index, line and column.
	Stacks [][]float64 `json:"stacks"`
	// Writes are stack index, page time, earlier writers.
	Writes   [][]float64        `json:"writes"`
	Fields   map[string]float64 `json:"fields"`
	History  [][]any            `json:"history"`
	Tampered bool               `json:"tampered"`
	Full     bool               `json:"full"`
	Marked   int                `json:"marked"`
	Broken   bool               `json:"broken"`
}

// causes is what the recorder told the lane, for compare.RenderDetails.
type causes struct {
	mark    string
	writes  []compare.ScriptWrite
	fields  map[string]int
	history []compare.ClientRedirect
	// historyWrites is, for each history entry, its write's index.
	historyWrites []int
	tampered      bool
	// data are the indexed responses, with their requesters (resolve.go).
	data []*compare.DataResponse
	// code is the site's own code the resolver read (compare.CodeSource).
	code []*compare.CodeSource
}

// readCauses marks the elements scripts wrote with a fresh attribute and
// reads the recorder's writes, just before the DOM snapshot, which carries
// the marks to the extractor. It asks from an isolated world and waits for
// the answer on the binding; no answer, or one that fails the checks, is
// a page that tampered: its causes are unknown.
func (a *audit) readCauses(ctx context.Context, world runtime.ExecutionContextID) causes {
	if a.opts.NoCauses {
		return causes{}
	}
	unknown := causes{tampered: true}
	mark, err := newMark("write")
	if err != nil {
		return unknown
	}
	for len(a.causesReply) > 0 {
		<-a.causesReply // a stale answer
	}
	_, err = cdp.Call(ctx, a.t.target, runtime.Evaluate, runtime.EvaluateParams{
		Expression: fmt.Sprintf("window.dispatchEvent(new CustomEvent(%q, {detail: %q}))", a.t.readEvent, mark),
		ContextID:  world, ReturnByValue: new(true), Silent: new(true),
	})
	if err != nil {
		a.b.log.Debug("write recorder", "url", a.req.URL, "err", err)
		return unknown
	}
	var raw string
	select {
	case raw = <-a.causesReply:
	case <-time.After(readCausesTimeout):
		a.b.log.Debug("write recorder: no answer", "url", a.req.URL)
		return unknown
	case <-ctx.Done():
		return unknown
	}
	c, err := parseRecorded(raw, mark)
	if err != nil {
		a.b.log.Debug("write recorder", "url", a.req.URL, "err", err)
		return unknown
	}
	return c
}

// errRecorded is parseRecorded's error for an answer that fails the checks.
var errRecorded = errors.New("recorder answer fails the checks")

// parseRecorded checks the recorder's answer and turns it into causes.
func parseRecorded(raw, mark string) (causes, error) {
	if len(raw) > maxRecorded {
		return causes{}, fmt.Errorf("%w: %d bytes", errRecorded, len(raw))
	}
	var r recorded
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return causes{}, fmt.Errorf("%w: %v", errRecorded, err)
	}
	if r.Broken || len(r.Scripts) > maxScripts || len(r.Stacks) > maxStacks || len(r.Writes) > maxWrites ||
		len(r.History) > maxWrites || len(r.Fields) > 16 {
		return causes{}, fmt.Errorf("%w: over its bounds", errRecorded)
	}
	for _, s := range append([]string{r.Doc}, r.Scripts...) {
		if !cleanRecorded(s) {
			return causes{}, fmt.Errorf("%w: a script URL", errRecorded)
		}
	}
	stacks, err := recordedStacks(r)
	if err != nil {
		return causes{}, err
	}
	c := causes{tampered: r.Tampered, fields: map[string]int{}}
	if r.Marked > 0 {
		c.mark = mark
	}
	c.writes = make([]compare.ScriptWrite, len(r.Writes))
	for i, w := range r.Writes {
		if len(w) != 3 || !index(w[0], -1, len(stacks)) || !index(w[2], 0, maxScripts+1) {
			return causes{}, fmt.Errorf("%w: a write", errRecorded)
		}
		c.writes[i] = scriptWrite(stacks, int(w[0]), pageMillis(w[1]), int(w[2]), r.Doc)
	}
	for k, v := range r.Fields {
		if !index(v, 0, len(c.writes)) || !cleanRecorded(k) {
			return causes{}, fmt.Errorf("%w: a field", errRecorded)
		}
		c.fields[k] = int(v)
	}
	for _, h := range r.History {
		if len(h) != 4 {
			return causes{}, fmt.Errorf("%w: a history entry", errRecorded)
		}
		from, ok1 := h[0].(string)
		to, ok2 := h[1].(string)
		t, ok3 := h[2].(float64)
		if !ok1 || !ok2 || !ok3 || !cleanRecorded(from) || !cleanRecorded(to) {
			return causes{}, fmt.Errorf("%w: a history entry", errRecorded)
		}
		w, ok4 := h[3].(float64)
		if !ok4 || !index(w, 0, maxWrites+1) {
			return causes{}, fmt.Errorf("%w: a history entry", errRecorded)
		}
		if len(c.history) < MaxNavigations+8 {
			c.history = append(c.history, compare.ClientRedirect{Mechanism: compare.RedirectHistory, From: from, To: to, PageTime: pageMillis(t)})
			c.historyWrites = append(c.historyWrites, int(w))
		}
	}
	return c, nil
}

// recordedStacks checks the answer's stacks and makes them frames.
func recordedStacks(r recorded) ([][]compare.Frame, error) {
	stacks := make([][]compare.Frame, len(r.Stacks))
	for i, flat := range r.Stacks {
		if len(flat) == 0 || len(flat)%3 != 0 || len(flat) > 3*recorderFrames {
			return nil, fmt.Errorf("%w: a stack", errRecorded)
		}
		for j := 0; j < len(flat); j += 3 {
			if !index(flat[j], 0, len(r.Scripts)) || !index(flat[j+1], 0, 1<<24) || !index(flat[j+2], 0, 1<<24) {
				return nil, fmt.Errorf("%w: a frame", errRecorded)
			}
			stacks[i] = append(stacks[i], compare.Frame{Script: r.Scripts[int(flat[j])], Line: int(flat[j+1]), Column: int(flat[j+2])})
		}
	}
	return stacks, nil
}

// scriptWrite is one recorded write: its stack (st, -1 when unknown), its
// page time and earlier writers.
func scriptWrite(stacks [][]compare.Frame, st int, at time.Duration, earlier int, doc string) compare.ScriptWrite {
	if st < 0 {
		return compare.ScriptWrite{PageTime: at, Earlier: earlier, Unknown: true}
	}
	stack := stacks[st]
	top := stack[0]
	w := compare.ScriptWrite{
		Script: top.Script, Inline: top.Script == doc, Line: top.Line, Column: top.Column,
		PageTime: at, Earlier: earlier, Stack: stack,
	}
	return w
}

// index reports whether a number the page sent is a whole number in [lo, hi).
func index(v float64, lo, hi int) bool {
	return v == math.Trunc(v) && v >= float64(lo) && v < float64(hi)
}

// cleanRecorded reports whether a string the page sent is one the recorder
// could have written: valid UTF-8, at most 8 KiB (2,048 UTF-16 units), no control character.
func cleanRecorded(s string) bool {
	return len(s) <= 8192 && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// pageString makes a string the page handed over safe to keep: valid
// UTF-8, at most 2 KiB.
func pageString(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > 2048 {
		s = cutUTF8(s, 2048)
	}
	return s
}

// pageMillis turns a page-time reading in milliseconds into a duration,
// nonsense (negative, not a number, beyond a day) as 0.
func pageMillis(ms float64) time.Duration {
	if !(ms >= 0 && ms < 24*3600*1000) {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// clientNavigation notes a navigation the page asked for (a script's
// location change, a meta refresh), for compare.RenderDetails.ClientRedirects.
// It runs on the event goroutine.
func (a *audit) clientNavigation(e *page.EventFrameRequestedNavigation) {
	if e.FrameID != a.mainFrame {
		return
	}
	var mech string
	at := a.clock.at()
	switch e.Reason {
	case page.ClientNavigationReasonScriptInitiated:
		mech = compare.RedirectScript
	case page.ClientNavigationReasonMetaTagRefresh, page.ClientNavigationReasonHTTPHeaderRefresh:
		mech, at = compare.RedirectMetaRefresh, a.clock.refreshAt()
	default:
		return
	}
	if u, err := url.Parse(e.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return
	}
	a.rec.mu.Lock()
	defer a.rec.mu.Unlock()
	if len(a.rec.redirects) >= MaxNavigations+1 {
		return
	}
	a.rec.redirects = append(a.rec.redirects, compare.ClientRedirect{
		Mechanism: mech, From: a.net.documentURL(), To: pageString(e.URL), PageTime: at,
	})
}

// markBytes is how many bytes of html the write mark's attributes take,
// each a space, the name, an equals sign and the quoted index.
func markBytes(html, mark string) int64 {
	if mark == "" {
		return 0
	}
	var n int64
	for rest := html; ; {
		i := strings.Index(rest, " "+mark+`="`)
		if i < 0 {
			return n
		}
		rest = rest[i+len(mark)+3:]
		j := strings.IndexByte(rest, '"')
		if j < 0 {
			return n
		}
		n += int64(len(mark) + 4 + j)
		rest = rest[j+1:]
	}
}
