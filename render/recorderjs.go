package render

// The write recorder names the script behind each difference the report
// finds (compare.Cause). It runs at the start of every document, before the
// page's own scripts, in the page's world (it must be on the page's call
// stacks), and wraps the DOM operations that can change what the report
// compares: the document.title setter, attribute writes on meta, link, html
// and script elements, node insertion (appendChild and the other insertion
// methods, the innerHTML, outerHTML and insertAdjacentHTML writes,
// document.write), text writes on connected elements, and the history
// API. Each recorded write keeps its stack: up to recorderFrames frames
// with a script URL (the recorder's own frames and the page-state
// script's have none). It records only writes that touch <head> or reach
// an element of the document, at most maxWrites of them. Where content
// came from is the proxy's to tell (bodies.go), from the responses it relayed.
//
// No page script can find, read or grow the records. They live in the
// script's closure; the lane reads them by dispatching an event whose name
// only Go and the closure know, from an isolated world, and the closure
// answers through a CDP binding it took off the window before any page
// script ran. The answer is written in the closure with captured
// functions, bounded in the page (writes, stacks, scripts, string
// lengths) before anything crosses to Go, and checked again in causes.go (types,
// ranges, control characters): a page that tampers gets its causes shown
// as unknown, never dropped and never its own words.
//
// recorderJS takes the binding's name (%[1]q), the event's (%[2]q), the cap
// on writes (%[3]d), frames per stack (%[4]d), scripts (%[5]d) and
// stacks (%[6]d).
const recorderJS = `(() => {
const BIND = %[1]q, EVT = %[2]q, MAX = %[3]d, MAXNODES = 200, FRAMES = %[4]d, MAXSCRIPTS = %[5]d, MAXSTACKS = %[6]d;
const W = window;
const send = W[BIND];
try { delete W[BIND]; } catch (e) {}
if (typeof send !== "function") return;
const O = Object, R = Reflect, apply = R.apply, own = O.getOwnPropertyDescriptor, def = O.defineProperty;
const Err = W.Error, isArray = Array.isArray, P = W.performance, pnow = P.now, JS = W.JSON, jstr = JS.stringify;
const now = () => apply(pnow, P, []);
const M = Map.prototype, S = Set.prototype;
const mget = M.get, mset = M.set, mforEach = M.forEach, sadd = S.add, sforEach = S.forEach;
const NP = W.Node.prototype, EP = W.Element.prototype, DP = W.Document.prototype;
const getter = (p, n) => { const d = p && own(p, n); return d && d.get; };
const gConnected = getter(NP, "isConnected"), gParent = getter(NP, "parentNode"), gType = getter(NP, "nodeType");
const gPrev = getter(NP, "previousSibling"), gNext = getter(NP, "nextSibling"), gFirst = getter(NP, "firstChild");
const gLast = getter(NP, "lastChild"), gLocal = getter(EP, "localName"), gChildren = getter(NP, "childNodes");
const gCurrent = getter(DP, "currentScript"), gDocEl = getter(DP, "documentElement");
const gDetail = getter(W.CustomEvent.prototype, "detail");
const setAttr = EP.setAttribute, listen = W.EventTarget.prototype.addEventListener, qs = DP.querySelector;
const call = (f, t, a) => apply(f, t, a || []);
const URLc = W.URL, gPath = getter(URLc.prototype, "pathname");
const DOCURL = String(document.URL).split("#")[0];
// The records live in this closure only: no property of the page holds them.
const writes = [], marks = new Map(), fields = new Map(), hist = [], ours = [];
const scripts = new Map(), scriptList = [], stacks = new Map(), stackList = [];
let full = false, busy = false;
const put = (a, v) => def(a, a.length, {value: v, writable: true, enumerable: true, configurable: true});
const cut = (s) => { s = "" + s; return s.length > 2048 ? s.slice(0, 2048) : s; };
const asCallSites = (e, cs) => cs;
// script: the index of a script URL in scriptList, -1 past the cap.
const script = (file) => {
  const i = call(mget, scripts, [file]);
  if (i !== undefined) return i;
  if (scriptList.length >= MAXSCRIPTS) return -1;
  put(scriptList, cut(file));
  call(mset, scripts, [file, scriptList.length - 1]);
  return scriptList.length - 1;
};
// caller: the stack (an index into stackList, each a flat list of script
// index, line and column of up to FRAMES frames with a script URL) and the
// script of its first frame; null when the stack cannot be read.
const caller = () => {
  const sp = own(Err, "prepareStackTrace"), sl = own(Err, "stackTraceLimit");
  let cs = null;
  try {
    def(Err, "prepareStackTrace", {value: asCallSites, writable: true, configurable: true});
    def(Err, "stackTraceLimit", {value: 32, writable: true, configurable: true});
    cs = new Err().stack;
  } catch (e) { cs = null; }
  try { if (sp) def(Err, "prepareStackTrace", sp); else delete Err.prepareStackTrace; } catch (e) {}
  try { if (sl) def(Err, "stackTraceLimit", sl); } catch (e) {}
  if (!isArray(cs)) return null;
  const flat = [];
  let key = "";
  for (let i = 0; i < cs.length && flat.length < 3 * FRAMES; i++) {
    const f = cs[i];
    let file = "", line = 0, col = 0;
    try { file = f.getFileName() || ""; line = +f.getLineNumber() || 0; col = +f.getColumnNumber() || 0; } catch (e) { return null; }
    if (typeof file !== "string" || file === "" || !/^https?:/.test(file)) continue;
    const s = script(file.split("#")[0]);
    if (s < 0) continue;
    put(flat, s); put(flat, line); put(flat, col);
    key += s + ":" + line + ":" + col + ",";
  }
  if (flat.length === 0) return null;
  let st = call(mget, stacks, [key]);
  if (st === undefined) {
    if (stackList.length >= MAXSTACKS) return {st: -1, top: flat[0]};
    put(stackList, flat);
    st = stackList.length - 1;
    call(mset, stacks, [key, st]);
  }
  return {st: st, top: flat[0]};
};
// note: one write by the caller to the given nodes and field.
const note = (nodes, field) => {
  if (full) return;
  if (writes.length >= MAX) { full = true; return; }
  const c = caller();
  const idx = writes.length;
  const w = [c ? c.st : -1, now(), 0];
  const by = c ? c.top : -1;
  const mark = (map, k) => {
    const prev = call(mget, map, [k]);
    const who = prev ? prev[1] : new Set();
    let earlier = 0;
    call(sforEach, who, [(s) => { if (s !== by) earlier++; }]);
    if (earlier > w[2]) w[2] = earlier;
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
// attr: a write to an attribute of a head element. <html lang> is a field
// of its own: marking the element would make every node of the page its.
const attr = (self) => {
  if (!connected(self)) return null;
  const f = headField(self);
  if (f === "") return null;
  return f === "lang" ? [[], "lang"] : [[self], ""];
};
for (const m of ["setAttribute", "setAttributeNS", "removeAttribute", "toggleAttribute"]) wrap(EP, m, null, attr);
const props = [["HTMLMetaElement", ["content", "name", "httpEquiv"]], ["HTMLLinkElement", ["href", "rel", "hreflang"]],
  ["HTMLScriptElement", ["text"]], ["HTMLTitleElement", ["text"]], ["HTMLElement", ["lang"]]];
for (const [cls, names] of props) for (const n of names) wrap(W[cls] && W[cls].prototype, n, null, attr, true);
wrap(DP, "title", null, () => {
  const de = call(gDocEl, document);
  let t = null;
  try { t = de ? call(qs, document, ["title"]) : null; } catch (e) {}
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
const path = (u) => { try { return call(gPath, new URLc("" + u, document.baseURI)); } catch (e) { return ""; } };
for (const m of ["pushState", "replaceState"]) {
  wrap(H, m, () => "" + document.URL, (self, args, from) => {
    if (args.length < 3 || args[2] === undefined || args[2] === null) return null;
    const to = "" + document.URL;
    if (path(from) === path(to)) return null;
    put(hist, [cut(from), cut(to), now(), writes.length]);
    return [[], "history"];
  });
}
// The reader answers the lane's event (named by EVT, which no page script
// knows) through the binding the page never saw. It copies a bounded
// amount, as JSON written here: the page's prototypes take no part.
const q = (s) => call(jstr, JS, ["" + s]);
const num = (n) => { n = +n; return n === n && n !== 1 / 0 && n !== -1 / 0 ? "" + n : "0"; };
const list = (a, one) => { let s = "["; for (let i = 0; i < a.length; i++) s += (i ? "," : "") + one(a[i]); return s + "]"; };
const nums = (a) => list(a, num);
const read = (attrName) => {
  let tampered = false;
  for (let i = 0; i < ours.length; i++) {
    const o = ours[i];
    const d = own(o[0], o[1]);
    if (!d || (o[3] ? d.set : d.value) !== o[2]) tampered = true;
  }
  let marked = 0;
  if (attrName) call(mforEach, marks, [(m, n) => {
    try { if (connected(n) && call(gType, n) === 1) { call(setAttr, n, [attrName, "" + m[0]]); marked++; } } catch (e) {}
  }]);
  let fs = "", nf = 0;
  call(mforEach, fields, [(m, k) => { fs += (nf++ ? "," : "") + q(k) + ":" + num(m[0]); }]);
  return "{\"doc\":" + q(DOCURL) + ",\"scripts\":" + list(scriptList, q) + ",\"stacks\":" + list(stackList, nums) +
    ",\"writes\":" + list(writes, nums) + ",\"fields\":{" + fs + "}" +
    ",\"history\":" + list(hist, (h) => "[" + q(h[0]) + "," + q(h[1]) + "," + num(h[2]) + "," + num(h[3]) + "]") +
    ",\"tampered\":" + tampered + ",\"full\":" + full + ",\"marked\":" + marked + "}";
};
call(listen, W, [EVT, (ev) => {
  let m = "", out = "";
  try { m = call(gDetail, ev); } catch (e) {}
  try { out = read(typeof m === "string" ? m : ""); } catch (e) { out = "{\"broken\":true}"; }
  try { call(send, W, [out]); } catch (e) {}
}, true]);
})()`
