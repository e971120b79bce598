package render

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
)

func TestStartWithoutBrowser(t *testing.T) {
	t.Parallel()
	s := &site{}
	_, err := Start(context.Background(), Options{ExecPath: "/nonexistent/chromium", Dial: s.dial})
	if !errors.Is(err, ErrBrowserMissing) {
		t.Fatalf("err = %v, want ErrBrowserMissing", err)
	}
	if _, err := Start(context.Background(), Options{ExecPath: "/nonexistent/chromium"}); err == nil {
		t.Fatalf("Start without a Dial succeeded")
	}
}

// TestBrowserFlags checks the command line Chromium really got.
func TestBrowserFlags(t *testing.T) {
	b, _ := mustBrowser(t)
	in, err := b.instance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(in.cdp.Process().Pid) + "/cmdline")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	var features []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--disable-features="); ok {
			features = append(features, v)
		}
	}
	if len(features) != 1 {
		t.Fatalf("%d --disable-features flags, want exactly 1 (only the last counts): %q", len(features), features)
	}
	for _, f := range append(strings.Split(chromedpDisabledFeatures, ","), disabledFeatures...) {
		if !slices.Contains(strings.Split(features[0], ","), f) {
			t.Errorf("--disable-features lacks %s", f)
		}
	}
	for _, want := range []string{
		"--headless", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--disable-gpu", "--disable-quic", "--webrtc-ip-handling-policy=disable_non_proxied_udp",
		"--proxy-bypass-list=<-loopback>", "--host-resolver-rules=" + hostResolverRules,
		"--proxy-server=http://" + in.defProxy.addr(),
	} {
		if !slices.Contains(args, want) {
			t.Errorf("command line lacks %s", want)
		}
	}
	if slices.Contains(args, "--disable-popup-blocking") {
		t.Errorf("popup blocking is off")
	}
	if root := os.Geteuid() == 0; slices.Contains(args, "--no-sandbox") != root {
		t.Errorf("--no-sandbox present = %v, running as root = %v", !root, root)
	}

	// The feature names still switch the address-bar popup renderers off
	// in this Chromium: no window (the default one, the prepared
	// context's) has one.
	waitSpare(t, b)
	in.retiring.Wait() // the last render's context is disposed of after it returned
	res, err := cdp.Call(context.Background(), in.cdp, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range res.TargetInfos {
		if strings.Contains(ti.URL, "omnibox-popup") {
			t.Errorf("omnibox popup target %s %s: update disabledFeatures", ti.Type, ti.URL)
		}
	}
}

// TestRenderLeavesNothing: after renders of every kind, no goroutine, no
// target and no browser context is left but the prepared one.
func TestRenderLeavesNothing(t *testing.T) {
	b, _ := mustBrowser(t)
	render := func(path string, timeout time.Duration) {
		t.Helper()
		renderPage(t, b, Request{URL: "http://" + hostFor(t) + path}, timeout)
	}
	render("/p/small.html", 20*time.Second)
	in := waitSpare(t, b)
	baseline := runtime.NumGoroutine()

	render("/p/small.html", 20*time.Second)
	render("/p/content.html", 20*time.Second)
	render("/p/spin.html", 3*time.Second)
	render("/p/popups.html", 20*time.Second)
	render("/p/internal.html", 20*time.Second)
	render("/redirect?to=http://127.0.0.1:1/", 20*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	b.Render(ctx, Request{URL: "http://" + hostFor(t) + "/hang"})

	if in2 := waitSpare(t, b); in2 != in {
		t.Fatalf("the browser was restarted")
	}
	var n int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if n = runtime.NumGoroutine(); n <= baseline {
			break
		}
	}
	if n > baseline {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the renders, %d before:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}

	in.retiring.Wait() // the last render's context is disposed of after it returned
	res, err := cdp.Call(context.Background(), in.cdp, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var spare *tab
	select {
	case s := <-in.spare:
		spare = s.t
		in.spare <- s
	default:
	}
	contexts := map[cdp.BrowserContextID]int{}
	for _, ti := range res.TargetInfos {
		contexts[ti.BrowserContextID]++
		if ti.BrowserContextID == spare.contextID && ti.TargetID != spare.target.TargetID {
			t.Errorf("the prepared context has an extra target %s %s", ti.Type, ti.URL)
		}
	}
	// The default context (its about:blank tab) and the prepared one.
	if len(contexts) != 2 {
		t.Errorf("targets in %d browser contexts, want 2: %+v", len(contexts), res.TargetInfos)
	}
}

// waitSpare waits until the next browser context is prepared and returns
// the running instance.
func waitSpare(tb testing.TB, b *Browser) *instance {
	tb.Helper()
	return waitSpares(tb, b, 1)
}

// TestBrowserRestart: when Chromium dies during a render, the render says
// so and the next one runs on a new Chromium.
func TestBrowserRestart(t *testing.T) {
	t.Parallel()
	_, s := mustBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Start(ctx, testOptions(s))
	requireBrowser(t, err)
	t.Cleanup(func() { b.Close() })

	in := waitSpare(t, b)
	pid := in.cdp.Process().Pid
	kill := func(ctx context.Context, tb *tab) { in.cdp.Process().Kill() }
	_, err = renderPage(t, b, Request{URL: "http://" + hostFor(t) + "/p/small.html", afterSettle: kill}, 20*time.Second)
	if !errors.Is(err, ErrBrowserCrashed) {
		t.Fatalf("render while the browser died: err = %v, want ErrBrowserCrashed", err)
	}
	snap, err := renderPage(t, b, Request{URL: "http://" + hostFor(t) + "/p/small.html"}, 30*time.Second)
	if err != nil || !bytes.Contains(snap.Body, []byte("rendered by script")) {
		t.Fatalf("render after the crash: %v", err)
	}
	in2 := waitSpare(t, b)
	if in2 == in || in2.cdp.Process().Pid == pid {
		t.Errorf("no new browser process")
	}

	// Close ends a render in flight with ErrClosed.
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := b.Render(ctx, Request{URL: "http://" + hostFor(t) + "/p/hangfetch.html", afterSettle: func(context.Context, *tab) {}})
		done <- err
	}()
	go func() {
		for len(s.hitsMatching(func(h hit) bool { return h.Path == "/hang" && strings.HasPrefix(h.Host, "testbrowserrestart") })) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
		close(started)
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the render never started")
	}
	b.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("render during Close: err = %v, want ErrClosed", err)
	}
	if _, err := b.Render(ctx, Request{URL: "http://" + hostFor(t) + "/p/small.html"}); !errors.Is(err, ErrClosed) {
		t.Errorf("render after Close: err = %v, want ErrClosed", err)
	}
	if err := syscallKill0(pid); err == nil {
		t.Errorf("the first browser process %d still runs", pid)
	}
	// Nothing of either browser outlives Close: no process of theirs, no
	// profile directory (the crashed one's children are found by it).
	for _, dir := range []string{in.profile, in2.profile} {
		if pids := usingProfile(dir); len(pids) > 0 {
			t.Errorf("processes %v still use the profile %s after Close", pids, dir)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the profile %s is still there after Close: %v", dir, err)
		}
	}
}

// usingProfile lists the live processes whose command line names dir as
// their profile (zombies, which hold nothing, are left out).
func usingProfile(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if bytes.Contains(cmdline, []byte("--user-data-dir="+dir+"\x00")) && !bytes.Contains(stat, []byte(") Z ")) {
			pids = append(pids, pid)
		}
	}
	return pids
}
