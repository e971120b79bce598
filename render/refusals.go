package render

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
)

// Google's Web Rendering Service renders without some browser features, so
// a page that needs them shows Googlebot less than a browser. The render
// lane refuses the same ones, so its view is not richer than Google's:
//
//   - IndexedDB and WebSQL are undefined (indexedDB, openDatabase);
//   - service worker registration fails with a SecurityError;
//   - WebGL is unavailable (--disable-3d-apis; getContext returns null);
//   - every permission request is declined (notifications, geolocation,
//     camera and microphone, the Permissions API).
//
// It also blocks window.open without a user gesture, as Chrome's popup
// blocker does (not a refused feature: a browser blocks it too).
//
// refusalsJS runs at the start of every document, before the page's own
// scripts, and notes which of these the page tried; the lane reports them
// (compare.RenderDetails.RefusedFeatures). Workers are not reached by it:
// IndexedDB stays defined inside a worker.

// The refused features, as the report names them.
const (
	FeatureIndexedDB     = "indexeddb"
	FeatureWebSQL        = "websql"
	FeatureServiceWorker = "service_worker"
	FeatureWebGL         = "webgl"
	FeaturePermissions   = "permissions"
)

// refusalsJS takes the property name its tally is read under (%[1]q).
const refusalsJS = `(() => {
const KEY = %[1]q;
const W = window;
if (Object.prototype.hasOwnProperty.call(W, KEY)) return;
const tried = new Set();
const note = (f) => { tried.add(f); };
const hide = (name, feature) => {
  try { Object.defineProperty(W, name, {get() { note(feature); return undefined; }, set() {}, configurable: true}); } catch (e) {}
};
hide("indexedDB", "indexeddb");
hide("openDatabase", "websql");
const swProto = W.ServiceWorkerContainer && W.ServiceWorkerContainer.prototype;
if (swProto) {
  Object.defineProperty(swProto, "register", {configurable: true, writable: true, value: function register() {
    note("service_worker");
    return Promise.reject(new DOMException("Service workers are not available to this renderer.", "SecurityError"));
  }});
}
const getContext = HTMLCanvasElement.prototype.getContext;
HTMLCanvasElement.prototype.getContext = function (type, ...args) {
  if (/^(experimental-)?webgl2?$/i.test(String(type))) { note("webgl"); return null; }
  return getContext.call(this, type, ...args);
};
const denied = (what) => new DOMException(what + " was declined.", "NotAllowedError");
if (W.Notification) {
  Object.defineProperty(W.Notification, "permission", {get() { return "denied"; }, configurable: true});
  W.Notification.requestPermission = function (cb) {
    note("permissions");
    if (typeof cb === "function") cb("denied");
    return Promise.resolve("denied");
  };
}
if (navigator.geolocation) {
  const fail = (err) => { note("permissions"); if (typeof err === "function") err({code: 1, PERMISSION_DENIED: 1, message: "User denied Geolocation"}); };
  navigator.geolocation.getCurrentPosition = function (ok, err) { fail(err); };
  navigator.geolocation.watchPosition = function (ok, err) { fail(err); return 0; };
}
if (navigator.mediaDevices) {
  navigator.mediaDevices.getUserMedia = function () { note("permissions"); return Promise.reject(denied("Camera or microphone access")); };
  navigator.mediaDevices.getDisplayMedia = function () { note("permissions"); return Promise.reject(denied("Screen capture")); };
}
if (navigator.permissions) {
  // Answered at once, not after the browser's own lookup: the page's
  // reaction must not race the completeness rule.
  navigator.permissions.query = function (d) {
    note("permissions");
    return Promise.resolve({name: d && d.name, state: "denied", onchange: null,
      addEventListener() {}, removeEventListener() {}, dispatchEvent() { return false; }});
  };
}
// Popups: as Chrome's popup blocker does, window.open without a user
// gesture opens nothing (the headless shell has no blocker of its own);
// the browser creates no window at all (--block-new-web-contents), and one
// that opens anyway in another browser is closed when its target appears.
const openWindow = W.open;
W.open = function open(...args) {
  if (!(navigator.userActivation && navigator.userActivation.isActive)) return null;
  return openWindow.apply(this, args);
};
Object.defineProperty(W, KEY, {enumerable: false, configurable: false, writable: false, value: () => Array.from(tried)});
})()`

// refusalsKey is the property refusalsJS keeps its tally under.
func (t *tab) refusalsKey() string { return t.stateKey + "_refused" }

// refusedFeatures reads which refused features the page tried, sorted.
func (a *audit) refusedFeatures(ctx context.Context) ([]string, error) {
	res, err := cdp.Call(ctx, a.t.target, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    fmt.Sprintf("(() => { const f = window[%q]; return typeof f === 'function' ? f() : []; })()", a.t.refusalsKey()),
		ReturnByValue: new(true),
		Silent:        new(true),
	})
	if err != nil {
		return nil, fmt.Errorf("read refused features: %w", err)
	}
	var tried []string
	if res.Result == nil || json.Unmarshal(res.Result.Value, &tried) != nil {
		return nil, nil
	}
	known := []string{FeatureIndexedDB, FeatureWebSQL, FeatureServiceWorker, FeatureWebGL, FeaturePermissions}
	tried = slices.DeleteFunc(tried, func(f string) bool { return !slices.Contains(known, f) })
	slices.Sort(tried)
	return slices.Compact(tried), nil
}
