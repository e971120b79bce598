package render

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRender renders a small page with a warm browser, one render at
// a time, and reports the median wall time and the CPU time per render of
// Chromium (its whole process tree) plus this process.
func BenchmarkRender(b *testing.B) {
	for _, pg := range []struct{ name, path, want string }{
		{"script", "/p/small.html", "rendered by script"},
		{"static", "/delayed/static.html", "static-content-rendered"},
	} {
		b.Run(pg.name, func(b *testing.B) { benchmarkRender(b, "http://bench.example"+pg.path, pg.want) })
	}
}

// benchmarkRender renders url one at a time, each once the next browser
// context is ready (low load: audits that do not queue), and reports the
// median wall time, the median of each stage of RenderTiming and the CPU
// per render of the whole process tree.
func benchmarkRender(b *testing.B, url, want string) {
	br, _ := mustBrowser(b)
	in := waitSpare(b, br)
	root := in.cdp.Process().Pid
	var walls []time.Duration
	stages := map[string][]time.Duration{}
	render := func() {
		waitSpare(b, br)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		snap, err := br.Render(ctx, Request{URL: url})
		cancel()
		if err != nil || !bytes.Contains(snap.Body, []byte(want)) {
			b.Fatalf("render: %v", err)
		}
		walls = append(walls, time.Since(start))
		t := snap.Render.Timing
		for k, v := range map[string]time.Duration{"context": t.Context, "navigate": t.Navigate,
			"docreq": t.DocumentRequest, "load": t.Load, "settle": t.Settle, "snapshot": t.Snapshot} {
			stages[k] = append(stages[k], v)
		}
	}
	render() // warm up
	walls, stages = nil, map[string][]time.Duration{}
	waitSpare(b, br)
	cpu0 := treeCPU(root) + selfCPU()
	b.ResetTimer()
	for b.Loop() {
		render()
	}
	b.StopTimer()
	waitSpare(b, br) // the prepared context of the last render counts too
	cpu := treeCPU(root) + selfCPU() - cpu0
	b.ReportMetric(float64(median(walls).Microseconds())/1000, "median-ms")
	for k, v := range stages {
		b.ReportMetric(float64(median(v).Microseconds())/1000, k+"-ms")
	}
	b.ReportMetric(cpu.Seconds()/float64(len(walls)), "cpu-s/op")
}

// BenchmarkColdDumpDOM is the comparison figure: a cold
// `chromium --headless --dump-dom` of the same page, process start included.
func BenchmarkColdDumpDOM(b *testing.B) {
	_, s := mustBrowser(b)
	path, err := FindBrowser("")
	if err != nil {
		b.Skip(err)
	}
	url := s.srv.URL + "/p/small.html"
	var walls []time.Duration
	var cpu time.Duration
	for b.Loop() {
		dir := b.TempDir()
		args := []string{"--headless", "--dump-dom", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + dir}
		if os.Geteuid() == 0 {
			args = append(args, "--no-sandbox")
		}
		cmd := exec.Command(path, append(args, url)...)
		start := time.Now()
		out, err := cmd.Output()
		walls = append(walls, time.Since(start))
		if err != nil || !bytes.Contains(out, []byte("rendered by script")) {
			b.Fatalf("dump-dom: %v: %s", err, out)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	b.ReportMetric(float64(median(walls).Microseconds())/1000, "median-ms")
	b.ReportMetric(cpu.Seconds()/float64(len(walls)), "cpu-s/op")
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// selfCPU is this process's user and system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// treeCPU is the CPU time of root's process tree, including children that
// already exited and were reaped (cutime, cstime).
func treeCPU(root int) time.Duration {
	const tick = 100 // USER_HZ on Linux
	var total int64
	for _, pid := range processTree(root) {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses.
		f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
		if len(f) < 15 {
			continue
		}
		for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
			n, _ := strconv.ParseInt(f[i], 10, 64)
			total += n
		}
	}
	return time.Duration(total) * time.Second / tick
}

// BenchmarkCauses is the write recorder's cost: warm renders of a static
// page, of a framework-like page that fetches its content and of the
// React 18 corpus app's product list (React from npm, its own bundle with
// a linked source map, two JSON fetches), with the
// recorder and without it (a second browser with NoCauses), interleaved
// render by render. It reports the median wall time of each and the
// ratios on/off.
func BenchmarkCauses(b *testing.B) {
	on, s, c := mustCorpus(b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	opts := testOptions(s)
	opts.NoCauses = true
	off, err := Start(ctx, opts)
	cancel()
	requireBrowser(b, err)
	defer off.Close()
	pages := []struct{ name, url, want string }{
		{"static", "http://bench.example/p/small.html", "rendered by script"},
		{"framework", "http://bench.example/causes/products.html", "Pruning saw"},
	}
	for _, p := range c.Pages() {
		if strings.HasSuffix(p.Expect, "react18/expect.json") && p.Key == "csr /products" {
			pages = append(pages, struct{ name, url, want string }{"react18", p.URL(), "Our products"})
		}
	}
	if len(pages) != 3 {
		b.Fatal("no React 18 page in the corpus")
	}
	render := func(br *Browser, url, want string) time.Duration {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		snap, err := br.Render(ctx, Request{URL: url})
		cancel()
		if err != nil || !bytes.Contains(snap.Body, []byte(want)) {
			b.Fatalf("render %s: %v", url, err)
		}
		return time.Since(start)
	}
	walls := map[string][]time.Duration{}
	for _, p := range pages { // warm up both
		render(on, p.url, p.want)
		render(off, p.url, p.want)
	}
	for b.Loop() {
		for _, p := range pages {
			waitSpare(b, on)
			walls[p.name+"/on"] = append(walls[p.name+"/on"], render(on, p.url, p.want))
			waitSpare(b, off)
			walls[p.name+"/off"] = append(walls[p.name+"/off"], render(off, p.url, p.want))
		}
	}
	for _, p := range pages {
		mOn, mOff := median(walls[p.name+"/on"]), median(walls[p.name+"/off"])
		b.ReportMetric(float64(mOn.Microseconds())/1000, p.name+"-on-ms")
		b.ReportMetric(float64(mOff.Microseconds())/1000, p.name+"-off-ms")
		b.ReportMetric(float64(mOn)/float64(mOff), p.name+"-on/off")
	}
}
