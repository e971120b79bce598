package cache

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/records"
)

// benchChildEnv, when set, makes the test binary a child of
// BenchmarkAdmitSQLiteProcesses instead of running tests: "dir count index".
const benchChildEnv = "LEKTA_CACHE_BENCH_CHILD"

// BenchmarkAdmitSQLiteProcesses measures admission decisions of 4
// processes on one SQLite file, as 4 `lekta audit` processes (or a server
// and 3 of them) share it: decisions/s over the whole run, and p50/p99 of
// each decision, lock waits included. Each process admits audits on hosts
// of its own, so every decision is a write.
func BenchmarkAdmitSQLiteProcesses(b *testing.B) {
	const procs = 4
	dir := b.TempDir()
	benchSQLite(b, dir, churnLimits()) // create and migrate the file once
	per := max(1, b.N/procs)
	type child struct {
		cmd *exec.Cmd
		out *bufio.Reader
		in  interface{ Write([]byte) (int, error) }
	}
	var children []child
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d", benchChildEnv, dir, per, i))
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		c := child{cmd: cmd, out: bufio.NewReader(out), in: in}
		if line, err := c.out.ReadString('\n'); err != nil || line != "ready\n" {
			b.Fatalf("child %d: %q, %v", i, line, err)
		}
		children = append(children, c)
	}
	b.ResetTimer()
	start := time.Now()
	for _, c := range children {
		if _, err := c.in.Write([]byte("go\n")); err != nil {
			b.Fatal(err)
		}
	}
	var lat []time.Duration
	for i, c := range children {
		line, err := c.out.ReadString('\n')
		if err != nil {
			b.Fatalf("child %d: %v", i, err)
		}
		for _, f := range strings.Fields(line) {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				b.Fatalf("child %d: %q", i, line)
			}
			lat = append(lat, time.Duration(n))
		}
	}
	wall := time.Since(start)
	b.StopTimer()
	for _, c := range children {
		if err := c.cmd.Wait(); err != nil {
			b.Fatalf("child: %v", err)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/wall.Seconds(), "decisions/s")
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// benchChild is one process of BenchmarkAdmitSQLiteProcesses: it opens the
// store, says ready, waits for go, admits count audits and prints each
// decision's latency in ns on one line.
func benchChild(spec string) int {
	var dir string
	var count, index int
	if _, err := fmt.Sscanf(spec, "%s %d %d", &dir, &count, &index); err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		return 2
	}
	db, err := records.Open(bg, records.Config{DataDir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		return 1
	}
	defer db.Close()
	s, err := NewSQLiteStore(bg, db.SQL(), db, churnLimits(), SQLiteOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		return 1
	}
	defer s.Close()
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return 1
	}
	out := make([]string, 0, count)
	for i := range count {
		t := time.Now()
		a, err := s.Admit(bg, fmt.Sprintf("https://p%d-h%d.bench/", index, i%5000), fmt.Sprintf("p%d-%d", index, i))
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			return 1
		}
		_ = a
		out = append(out, strconv.FormatInt(time.Since(t).Nanoseconds(), 10))
	}
	fmt.Println(strings.Join(out, " "))
	return 0
}
