package audit

// Shared parts of the hostile-input tests (hostile_*_test.go): a canary
// (internal/canary) where nothing may ever connect, the hostile pages of
// testdata/site/hostile served with the canary's port filled in, and checks
// that an audit left nothing behind.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/canary"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
)

// hostileEnv is an audit env whose site also serves the hostile pages, with
// a canary and a test resolver: rebind.example and rebind6.example resolve
// to the canary's addresses (a public-looking name pointing inside), every
// other name without a resolve rule fails to resolve.
type hostileEnv struct {
	*env
	canary *canary.Canary
	// port is the test site's port, which the guard allows on public
	// addresses so that the address check alone must refuse the canary.
	port uint16
}

// hostileResolver answers the test's DNS: fixed names, and a function for
// names whose answer changes (DNS rebinding).
type hostileResolver struct {
	fixed map[string][]netip.Addr
	dyn   func(host string) ([]netip.Addr, bool)
}

func (r hostileResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if r.dyn != nil {
		if addrs, ok := r.dyn(host); ok {
			return addrs, nil
		}
	}
	if addrs, ok := r.fixed[host]; ok {
		return addrs, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// hostileOptions adjust mustHostile.
type hostileOptions struct {
	// dns, when set, answers DNS for the names it knows, before the
	// fixed ones (rebind.example and rebind6.example).
	dns func(host string) ([]netip.Addr, bool)
	// guard adjusts the guard's configuration after mustHostile's own.
	guard func(*env, *policy.GuardConfig)
	// config adjusts the auditor's Config.
	config func(*Config)
}

// mustHostile starts a hostile env.
func mustHostile(tb testing.TB, o hostileOptions) *hostileEnv {
	tb.Helper()
	h := &hostileEnv{canary: canary.Loopback(tb)}
	e := mustEnvGuard(tb, func(e *env, gc *policy.GuardConfig) {
		h.port = e.site.AddrPort().Port()
		// Allowing the canary's and the site's ports on public addresses
		// leaves the address check as the only thing between a page and
		// the canary.
		gc.AllowPorts = append(gc.AllowPorts, uint16(h.canary.Port()), h.port)
		if h.canary.Port6() != h.canary.Port() {
			gc.AllowPorts = append(gc.AllowPorts, uint16(h.canary.Port6()))
		}
		gc.Resolver = hostileResolver{dyn: o.dns, fixed: map[string][]netip.Addr{
			"rebind.example":  {netip.MustParseAddr("127.0.0.1")},
			"rebind6.example": {netip.MustParseAddr("::1")},
		}}
		if o.guard != nil {
			o.guard(e, gc)
		}
	}, o.config)
	h.env = e
	e.site.Handle("/hostile/", http.HandlerFunc(h.servePage))
	return h
}

// hostileDir is testdata/site/hostile.
func hostileDir() string { return filepath.Join(testsite.Dir(), "hostile") }

// servePage serves a file of testdata/site/hostile with {{CANARY}},
// {{CANARY6}} and {{PORT}} filled in.
func (h *hostileEnv) servePage(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/hostile/")
	data, err := os.ReadFile(filepath.Join(hostileDir(), filepath.Base(name)))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	data = []byte(strings.NewReplacer(
		"{{CANARY}}", strconv.Itoa(h.canary.Port()),
		"{{CANARY6}}", strconv.Itoa(h.canary.Port6()),
		"{{PORT}}", strconv.Itoa(int(h.port)),
	).Replace(string(data)))
	switch filepath.Ext(name) {
	case ".js":
		w.Header().Set("Content-Type", "text/javascript")
	case ".html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	w.Write(data)
}

// serveFile makes path answer with a file of testdata/site/hostile, as is,
// under contentType ("" sends no Content-Type at all).
func (h *hostileEnv) serveFile(tb testing.TB, path, file, contentType string) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(hostileDir(), file))
	if err != nil {
		tb.Fatal(err)
	}
	h.site.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if contentType == "" {
			w.Header()["Content-Type"] = nil // no sniffed type either
		} else {
			w.Header().Set("Content-Type", contentType)
		}
		w.Write(data)
	}))
}

// auditURL audits rawURL with the CLI trigger; it fails the test when no
// report comes back.
func (h *hostileEnv) auditURL(tb testing.TB, rawURL string) *Report {
	tb.Helper()
	r := h.audit(tb, rawURL, TriggerCLI)
	checkReportUTF8(tb, r)
	return r
}

// describe is a one-line summary of a report for failure messages.
func describe(r *Report) string {
	var codes []string
	for _, f := range r.Findings {
		codes = append(codes, f.Code)
	}
	return fmt.Sprintf("status %s (%s); plain %s %q; render %s %q; findings %v",
		r.Status, r.Reason, r.Lanes.Plain.Outcome, r.Lanes.Plain.Error,
		r.Lanes.Render.Outcome, r.Lanes.Render.Error, codes)
}

// laneFinding returns the report's finding with code for lane.
func laneFinding(r *Report, code string, lane compare.Lane) (compare.Finding, bool) {
	for _, f := range r.Findings {
		if f.Code == code && f.Lane == lane {
			return f, true
		}
	}
	return compare.Finding{}, false
}

// checkReportUTF8 fails the test when any string of the report, or its
// JSON, is not valid UTF-8: the text report prints these strings as they are.
func checkReportUTF8(tb testing.TB, r *Report) {
	tb.Helper()
	for _, p := range invalidUTF8(reflect.ValueOf(r), "report") {
		tb.Errorf("invalid UTF-8 in %s", p)
	}
	b, err := r.Encode()
	if err != nil {
		tb.Fatalf("encode report: %v", err)
	}
	if !utf8.Valid(b) {
		tb.Errorf("the report's JSON is not valid UTF-8")
	}
}

// invalidUTF8 lists the paths of strings under v that are not valid UTF-8.
func invalidUTF8(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return invalidUTF8(v.Elem(), path)
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return []string{fmt.Sprintf("%s = %q", path, v.String())}
		}
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out = append(out, invalidUTF8(v.Field(i), path+"."+f.Name)...)
			}
		}
		return out
	case reflect.Slice, reflect.Array:
		var out []string
		for i := range v.Len() {
			out = append(out, invalidUTF8(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case reflect.Map:
		var out []string
		for it := v.MapRange(); it.Next(); {
			out = append(out, invalidUTF8(it.Key(), path+"{key}")...)
			out = append(out, invalidUTF8(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()))...)
		}
		return out
	}
	return nil
}

// idleState is what the shared browser and the process look like between
// audits: the goroutine count and the browser's targets by type.
type idleState struct {
	goroutines int
	targets    map[string]int
}

// waitIdle waits until the browser's targets look idle (the default
// context's blank page and the prepared context's page, nothing else) and
// returns the state then.
func waitIdle(tb testing.TB) idleState {
	tb.Helper()
	var got map[string]int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got = targetCounts(tb)
		if len(got) == 1 && got["page"] == 2 {
			time.Sleep(200 * time.Millisecond) // let the prewarm goroutine finish
			return idleState{goroutines: runtime.NumGoroutine(), targets: targetCounts(tb)}
		}
	}
	tb.Fatalf("the browser never became idle: targets %v", got)
	return idleState{}
}

// targetCounts counts the shared browser's targets by type.
func targetCounts(tb testing.TB) map[string]int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ts, err := browser.Targets(ctx)
	if err != nil {
		tb.Fatalf("list browser targets: %v", err)
	}
	out := map[string]int{}
	for _, t := range ts {
		out[t.Type]++
	}
	return out
}

// checkBackToIdle fails the test unless, within a settle period, the
// browser's targets are those of before and no goroutine is left over.
func checkBackToIdle(tb testing.TB, before idleState) {
	tb.Helper()
	var targets map[string]int
	var n int
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		targets, n = targetCounts(tb), runtime.NumGoroutine()
		if reflect.DeepEqual(targets, before.targets) && n <= before.goroutines {
			return
		}
	}
	if !reflect.DeepEqual(targets, before.targets) {
		tb.Errorf("browser targets %v after the audit, %v before", targets, before.targets)
	}
	if n > before.goroutines {
		buf := make([]byte, 1<<20)
		tb.Errorf("%d goroutines after the audit, %d before:\n%s", n, before.goroutines, buf[:runtime.Stack(buf, true)])
	}
}
