package render

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"lekta.dev/lekta/compare"
)

// The write recorder names the script behind each difference the report
// finds (compare.Cause). It runs at the start of every document, before the
// page's own scripts, in the page's world (it must be on the page's call
// stacks), and wraps the DOM operations that can change what the report
// compares: the document.title setter, attribute writes on meta, link, html
// and script elements, node insertion (appendChild and the other insertion
// methods, the innerHTML, outerHTML and insertAdjacentHTML writes,
// document.write), text writes on connected elements, and the history
// API. Each recorded write takes its caller from the stack, the first frame
// with a script URL: the recorder's own frames and the page-state script's
// have none. It records only writes that touch <head> or reach an element
// of the document, at most maxWrites of them, and keeps the paths of the
// fetch and XHR responses scripts received, so content a script inserted
// after a response names it.
//
// Everything it reports comes from the page, which can forge it: it
// decides only what the report says about the page's own scripts, every
// string is cut and made valid UTF-8 here, and the report escapes it. A
// page that replaces the wrapped functions or defeats the stack capture
// gets its writes attributed to no script (compare: "unknown"), and nothing
// it does to the recorder throws into its own code: every step of the
// recorder is inside a try.
//
// recorderJS takes the property name its records are read under (%[1]q)
// and the cap on writes (%[2]d).
const recorderJS = `(() => {
const KEY = %[1]q, MAX = %[2]d, MAXNODES = 200;
const W = window;
if (Object.prototype.hasOwnProperty.call(W, KEY)) return;
const O = Object, R = Reflect, apply = R.apply, own = O.getOwnPropertyDescriptor, def = O.defineProperty;
const Err = W.Error, isArray = Array.isArray, P = W.performance, pnow = P.now;
const now = () => apply(pnow, P, []);
const M = Map.prototype, S = Set.prototype;
const mget = M.get, mset = M.set, mforEach = M.forEach, sadd = S.add, shas = S.has, sforEach = S.forEach;
const NP = W.Node.prototype, EP = W.Element.prototype, DP = W.Document.prototype;
const getter = (p, n) => { const d = own(p, n); return d && d.get; };
const gConnected = getter(NP, "isConnected"), gParent = getter(NP, "parentNode"), gType = getter(NP, "nodeType");
const gPrev = getter(NP, "previousSibling"), gNext = getter(NP, "nextSibling"), gFirst = getter(NP, "firstChild");
const gLast = getter(NP, "lastChild"), gLocal = getter(EP, "localName"), gChildren = getter(NP, "childNodes");
const gCurrent = getter(DP, "currentScript"), gDocEl = getter(DP, "documentElement");
const setAttr = EP.setAttribute;
const call = (f, t, a) => apply(f, t, a || []);
const URLc = W.URL, gPath = getter(URLc.prototype, "pathname");
const DOCURL = String(document.URL).split("#")[0];
const writes = [], marks = new Map(), fields = new Map(), responses = [], hist = [], ours = [];
let full = false, busy = false;
const put = (a, v) => def(a, a.length, {value: v, writable: true, enumerable: true, configurable: true});
const cut = (s) => { s = String(s); return s.length > 2048 ? s.slice(0, 2048) : s; };
const asCallSites = (e, cs) => cs;
// caller: the first frame with a script URL, and every script URL on the stack.
const caller = () => {
  const sp = own(Err, "prepareStackTrace"), sl = own(Err, "stackTraceLimit");
  let cs = null;
  try {
    def(Err, "prepareStackTrace", {value: asCallSites, writable: true, configurable: true});
    Err.stackTraceLimit = 24;
    cs = new Err().stack;
  } catch (e) { cs = null; }
  try { if (sp) def(Err, "prepareStackTrace", sp); else delete Err.prepareStackTrace; } catch (e) {}
  try { if (sl) def(Err, "stackTraceLimit", sl); } catch (e) {}
  if (!isArray(cs)) return null;
  let top = null;
  const all = new Set();
  for (let i = 0; i < cs.length; i++) {
    const f = cs[i];
    let file = "";
    try { file = f.getFileName() || ""; } catch (e) { return null; }
    if (typeof file !== "string" || file === "" || !/^https?:/.test(file)) continue;
    file = file.split("#")[0];
    call(sadd, all, [file]);
    if (!top) {
      let line = 0, col = 0;
      try { line = +f.getLineNumber() || 0; col = +f.getColumnNumber() || 0; } catch (e) {}
      top = {s: cut(file), i: file === DOCURL, l: line, c: col};
    }
  }
  if (!top) return null;
  top.all = all;
  return top;
};
// note: one write by the caller to the given nodes and field.
const note = (nodes, field) => {
  if (full) return;
  if (writes.length >= MAX) { full = true; return; }
  const c = caller();
  const t = now();
  let req = "", reqBy = "";
  if (c) {
    for (let i = responses.length - 1; i >= 0; i--) {
      const r = responses[i];
      if (r.t <= t && call(shas, c.all, [r.s])) { req = r.p; reqBy = r.s; break; }
    }
  }
  const idx = writes.length;
  const w = {s: c ? c.s : "", i: c ? c.i : false, l: c ? c.l : 0, c: c ? c.c : 0, t: t, e: 0, r: req, q: reqBy};
  const by = c ? c.s : "";
  const mark = (map, k) => {
    const prev = call(mget, map, [k]);
    const who = prev ? prev[1] : new Set();
    let earlier = 0;
    call(sforEach, who, [(s) => { if (s !== by) earlier++; }]);
    if (earlier > w.e) w.e = earlier;
    call(sadd, who, [by]);
    call(mset, map, [k, [idx, who]]);
  };
  for (let i = 0; i < nodes.length; i++) mark(marks, nodes[i]);
  if (field) mark(fields, field);
  put(writes, w);
};
const connected = (n) => { try { return !!call(gConnected, n); } catch (e) { return false; } };
const elementOf = (n) => {
  // An element itself, or the parent a text node went into.
  const type = call(gType, n);
  if (type === 1) return n;
  if (type === 3) { const p = call(gParent, n); return p && call(gType, p) === 1 ? p : null; }
  return null;
};
const targets = (list) => {
  const out = [];
  for (let i = 0; i < list.length && out.length < MAXNODES; i++) {
    const n = list[i];
    if (n === null || typeof n !== "object") continue;
    const e = elementOf(n);
    if (e && connected(e)) put(out, e);
  }
  return out;
};
const kids = (n) => { const out = []; const cs = call(gChildren, n); for (let i = 0; i < cs.length && i < MAXNODES; i++) put(out, cs[i]); return out; };
// nodesOf: the nodes an insertion call hands over (a fragment's children, taken before it empties).
const nodesOf = (args) => {
  const out = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === null || typeof a !== "object") continue;
    try { if (call(gType, a) === 11) { const k = kids(a); for (let j = 0; j < k.length; j++) put(out, k[j]); continue; } } catch (e) { continue; }
    put(out, a);
  }
  return out;
};
// between: the nodes of parent after prev and before next (either null: the ends).
const between = (parent, prev, next) => {
  const out = [];
  if (!parent) return out;
  let n = prev ? call(gNext, prev) : call(gFirst, parent);
  while (n && n !== next && out.length < MAXNODES) { put(out, n); n = call(gNext, n); }
  return out;
};
const spot = (n) => ({parent: call(gParent, n), prev: call(gPrev, n), next: call(gNext, n)});
const headField = (el) => {
  const name = call(gLocal, el);
  if (name === "title") return "title";
  if (name === "html") return "lang";
  if (name === "meta" || name === "link" || name === "script" || name === "base") return name;
  return "";
};
// wrap replaces proto[name]'s function (or setter) with one that runs the
// original and then records what after() returns, never throwing into the page.
const wrap = (proto, name, before, after, setter) => {
  if (!proto) return;
  const d = own(proto, name);
  if (!d) return;
  const orig = setter ? d.set : d.value;
  if (typeof orig !== "function") return;
  const w = {[name](...args) {
    let pre = null;
    if (!busy && before) { busy = true; try { pre = before(this, args); } catch (e) {} busy = false; }
    const r = apply(orig, this, args);
    if (!busy && !full) {
      busy = true;
      try { const got = after(this, args, pre); if (got && (got[0].length || got[1])) note(got[0], got[1]); } catch (e) {}
      busy = false;
    }
    return r;
  }}[name];
  const nd = {configurable: d.configurable, enumerable: d.enumerable};
  if (setter) { nd.get = d.get; nd.set = w; } else { nd.value = w; nd.writable = d.writable; }
  try { def(proto, name, nd); put(ours, [proto, name, w, !!setter]); } catch (e) {}
};
const inserted = (self, args, pre) => [targets(pre), ""];
for (const m of ["appendChild", "insertBefore", "replaceChild"]) wrap(NP, m, (s, a) => nodesOf([a[0]]), inserted);
const strings = (self, args, pre, parent) => {
  // append("text") and the like: the text lands in parent.
  for (let i = 0; i < args.length; i++) if (typeof args[i] === "string" && parent) { put(pre, parent); break; }
  return pre;
};
for (const p of [EP, DP, W.DocumentFragment && W.DocumentFragment.prototype]) {
  for (const m of ["append", "prepend", "replaceChildren"]) wrap(p, m, (s, a) => strings(s, a, nodesOf(a), s), inserted);
}
for (const p of [EP, W.CharacterData && W.CharacterData.prototype]) {
  for (const m of ["before", "after", "replaceWith"]) wrap(p, m, (s, a) => strings(s, a, nodesOf(a), call(gParent, s)), inserted);
}
const html = (self, args, pre) => [targets(between(pre.parent, pre.prev, pre.next)), ""];
wrap(EP, "innerHTML", (s) => ({parent: s, prev: null, next: null}), html, true);
wrap(W.ShadowRoot && W.ShadowRoot.prototype, "innerHTML", (s) => ({parent: s, prev: null, next: null}), html, true);
wrap(EP, "outerHTML", (s) => spot(s), html, true);
wrap(EP, "setHTMLUnsafe", (s) => ({parent: s, prev: null, next: null}), html);
const adjacent = (s, a) => {
  const where = String(a[0]).toLowerCase();
  if (where === "beforebegin") return {parent: call(gParent, s), prev: call(gPrev, s), next: s};
  if (where === "afterbegin") return {parent: s, prev: null, next: call(gFirst, s)};
  if (where === "beforeend") return {parent: s, prev: call(gLast, s), next: null};
  return {parent: call(gParent, s), prev: s, next: call(gNext, s)};
};
wrap(EP, "insertAdjacentHTML", adjacent, html);
wrap(EP, "insertAdjacentElement", (s, a) => nodesOf([a[1]]), inserted);
wrap(EP, "insertAdjacentText", adjacent, html);
const text = (self) => {
  const e = elementOf(self);
  if (!e || !connected(e)) return null;
  return [[e], call(gLocal, e) === "title" ? "title" : ""];
};
wrap(NP, "textContent", null, text, true);
wrap(W.HTMLElement && W.HTMLElement.prototype, "innerText", null, text, true);
const attr = (self) => {
  if (!connected(self)) return null;
  const f = headField(self);
  if (f === "") return null;
  return [[self], f === "lang" ? "lang" : ""];
};
for (const m of ["setAttribute", "setAttributeNS", "removeAttribute", "toggleAttribute"]) wrap(EP, m, null, attr);
const props = [["HTMLMetaElement", ["content", "name", "httpEquiv"]], ["HTMLLinkElement", ["href", "rel", "hreflang"]],
  ["HTMLScriptElement", ["text"]], ["HTMLTitleElement", ["text"]], ["HTMLElement", ["lang"]]];
for (const [cls, names] of props) for (const n of names) wrap(W[cls] && W[cls].prototype, n, null, attr, true);
wrap(DP, "title", null, () => {
  const de = call(gDocEl, document);
  let t = null;
  try { t = de ? document.querySelector("title") : null; } catch (e) {}
  return [t ? [t] : [], "title"];
}, true);
const written = (self) => {
  const cs = call(gCurrent, self);
  return cs ? {parent: call(gParent, cs), prev: cs, next: null} : null;
};
const wroteHTML = (self, args, pre) => pre ? [targets(between(pre.parent, pre.prev, pre.next)), ""] : null;
wrap(DP, "write", written, wroteHTML);
wrap(DP, "writeln", written, wroteHTML);
const H = W.History && W.History.prototype;
const path = (u) => { try { return call(gPath, new URLc(String(u), document.baseURI)); } catch (e) { return ""; } };
for (const m of ["pushState", "replaceState"]) {
  wrap(H, m, () => String(document.URL), (self, args, from) => {
    if (args.length < 3 || args[2] === undefined || args[2] === null) return null;
    const to = String(document.URL);
    if (path(from) === path(to)) return null;
    const idx = writes.length;
    put(hist, {f: cut(from), u: cut(to), t: now(), w: idx});
    return [[], "history"];
  });
}
// Responses: fetch and XHR, with the script that asked.
const F = W.fetch;
if (typeof F === "function") {
  const thenF = W.Promise.prototype.then;
  const wf = {fetch(...args) {
    let c = null;
    if (!busy) { busy = true; try { c = caller(); } catch (e) {} busy = false; }
    const p = apply(F, this, args);
    if (c) {
      try {
        call(thenF, p, [(res) => {
          try { if (responses.length < MAX) put(responses, {s: c.s, p: cut(path(res.url)), t: now()}); } catch (e) {}
        }, () => {}]);
      } catch (e) {}
    }
    return p;
  }}.fetch;
  try { def(W, "fetch", {value: wf, writable: true, configurable: true, enumerable: true}); put(ours, [W, "fetch", wf, false]); } catch (e) {}
}
const X = W.XMLHttpRequest && W.XMLHttpRequest.prototype;
if (X) {
  const listen = W.EventTarget.prototype.addEventListener, gURL = getter(X, "responseURL"), gState = getter(X, "readyState");
  wrap(X, "send", null, (self) => {
    const c = caller();
    if (!c) return null;
    call(listen, self, ["readystatechange", () => {
      try { if (call(gState, self) === 4 && responses.length < MAX) put(responses, {s: c.s, p: cut(path(call(gURL, self))), t: now()}); } catch (e) {}
    }]);
    return null;
  });
}
def(W, KEY, {enumerable: false, configurable: false, writable: false, value: (attrName) => {
  let tampered = false;
  for (let i = 0; i < ours.length; i++) {
    const [p, n, w, setter] = ours[i];
    const d = own(p, n);
    if (!d || (setter ? d.set : d.value) !== w) tampered = true;
  }
  let marked = 0;
  if (attrName) call(mforEach, marks, [(m, n) => {
    try { if (connected(n) && call(gType, n) === 1) { call(setAttr, n, [attrName, "" + m[0]]); marked++; } } catch (e) {}
  }]);
  const f = {};
  call(mforEach, fields, [(m, k) => { f[k] = m[0]; }]);
  return {writes: writes, fields: f, history: hist, tampered: tampered, full: full, marked: marked};
}});
})()`

// maxWrites caps the writes the recorder keeps per document; later ones
// go unrecorded (and their content unattributed), so a page that inserts
// without end costs the recorder a bounded amount.
const maxWrites = 2000

// recorderKey is the property recorderJS keeps its records under.
func (t *tab) recorderKey() string { return t.stateKey + "_writes" }

// recorded is what recorderJS returns.
type recorded struct {
	Writes []struct {
		Script  string  `json:"s"`
		Inline  bool    `json:"i"`
		Line    int     `json:"l"`
		Column  int     `json:"c"`
		Time    float64 `json:"t"`
		Earlier int     `json:"e"`
		Request string  `json:"r"`
		By      string  `json:"q"`
	} `json:"writes"`
	Fields  map[string]int `json:"fields"`
	History []struct {
		From  string  `json:"f"`
		To    string  `json:"u"`
		Time  float64 `json:"t"`
		Write int     `json:"w"`
	} `json:"history"`
	Tampered bool `json:"tampered"`
	Full     bool `json:"full"`
	Marked   int  `json:"marked"`
}

// causes is what the recorder told the lane, for compare.RenderDetails.
type causes struct {
	mark     string
	writes   []compare.ScriptWrite
	fields   map[string]int
	history  []compare.ClientRedirect
	tampered bool
}

// readCauses marks the elements scripts wrote with a fresh attribute and
// reads the recorder's writes; it runs in the page's world, just before the
// DOM snapshot, which carries the marks to the extractor.
func (a *audit) readCauses(ctx context.Context) (causes, error) {
	if a.opts.NoCauses {
		return causes{}, nil
	}
	mark, err := newMark("write")
	if err != nil {
		return causes{}, err
	}
	res, err := cdp.Call(ctx, a.t.target, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    fmt.Sprintf("(() => { const f = window[%q]; return typeof f === 'function' ? f(%q) : null; })()", a.t.recorderKey(), mark),
		ReturnByValue: new(true),
		Silent:        new(true),
	})
	switch {
	case err != nil:
		return causes{}, fmt.Errorf("read writes: %w", err)
	case res.ExceptionDetails != nil:
		return causes{}, fmt.Errorf("read writes: %s", exceptionText(res.ExceptionDetails))
	case res.Result == nil || string(res.Result.Value) == "null" || len(res.Result.Value) == 0:
		return causes{}, nil
	}
	var r recorded
	if err := json.Unmarshal(res.Result.Value, &r); err != nil {
		return causes{}, fmt.Errorf("read writes: %w", err)
	}
	c := causes{tampered: r.Tampered, fields: map[string]int{}}
	if r.Marked > 0 {
		c.mark = mark
	}
	if len(r.Writes) > maxWrites {
		r.Writes = r.Writes[:maxWrites]
	}
	c.writes = make([]compare.ScriptWrite, len(r.Writes))
	for i, w := range r.Writes {
		c.writes[i] = compare.ScriptWrite{
			Script: pageString(w.Script), Inline: w.Inline,
			Line: max(w.Line, 0), Column: max(w.Column, 0),
			PageTime: pageMillis(w.Time), Earlier: max(w.Earlier, 0),
			Request: pageString(w.Request), RequestBy: pageString(w.By), Unknown: w.Script == "",
		}
	}
	for k, v := range r.Fields {
		if v >= 0 && v < len(c.writes) && len(c.fields) < 16 {
			c.fields[pageString(k)] = v
		}
	}
	for _, h := range r.History {
		if len(c.history) >= MaxNavigations+8 {
			break
		}
		c.history = append(c.history, compare.ClientRedirect{
			Mechanism: compare.RedirectHistory, From: pageString(h.From), To: pageString(h.To), PageTime: pageMillis(h.Time),
		})
	}
	return c, nil
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
