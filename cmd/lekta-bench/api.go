package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// apiTable is the warm audits as the API's client sees them: from sending
// the POST to reading the report of its GET ?wait=, against the report's
// own duration_ms, the page's floor and the build before.
type apiTable struct {
	out io.Writer
	tw  *tabwriter.Writer
}

func newAPITable(out io.Writer) *apiTable {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "page\tclient p50 base\tnew\tnew/base\tclient/duration_ms base\tnew\tPOST→start p50 base\tnew\tfloor\tnew client/floor\t\n")
	return &apiTable{out: out, tw: tw}
}

// add is one page's row.
func (t *apiTable) add(p page, pageFloor time.Duration, base, next *measured) {
	bc, nc := pick(base.answers, clientTime), pick(next.answers, clientTime)
	floor, perFloor := "-", "-"
	if pageFloor > 0 {
		floor = pageFloor.String()
		perFloor = fmt.Sprintf("%.2f", float64(median(nc))/float64(pageFloor))
	}
	fmt.Fprintf(t.tw, "%s\t%v\t%v\t%.2f\t%.2f\t%.2f\t%v\t%v\t%s\t%s\t\n", p.kind,
		median(bc), median(nc), float64(median(nc))/float64(median(bc)),
		perDuration(base.answers), perDuration(next.answers),
		median(pick(base.answers, lag)), median(pick(next.answers, lag)), floor, perFloor)
}

func (t *apiTable) flush() error {
	fmt.Fprintf(t.out, "\nthrough the API, as a client: POST, then GET ?wait=60s until the report (client/duration_ms: median of each audit's ratio;\nfloor: when the page itself shows its late content in a warm headless shell, by its own clock, median of 10)\n\n")
	return t.tw.Flush()
}

// pick is one time of each answer.
func pick(as []answer, of func(answer) time.Duration) []time.Duration {
	out := make([]time.Duration, len(as))
	for i, a := range as {
		out[i] = of(a)
	}
	return out
}

func clientTime(a answer) time.Duration { return a.client }
func lag(a answer) time.Duration        { return a.lag }

// perDuration is the median of each audit's client time over its
// duration_ms.
func perDuration(as []answer) float64 {
	rs := make([]float64, 0, len(as))
	for _, a := range as {
		if a.DurationMS > 0 {
			rs = append(rs, float64(a.client)/float64(time.Duration(a.DurationMS)*time.Millisecond))
		}
	}
	if len(rs) == 0 {
		return 0
	}
	return medianF(rs)
}

// machine is the whole machine's CPU counters and load, read at the start
// and the end of the run, for the figures' context.
type machine struct {
	busy, total float64
	load        string
}

func readMachine() machine {
	var m machine
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return m
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		m.total += v
		if i != 3 && i != 4 { // idle, iowait
			m.busy += v
		}
	}
	return m
}

// loadLine says how busy the machine was between start and now: what the
// bench itself did (both builds, Chromium, the test site) and anything
// else running.
func loadLine(start machine) string {
	end := readMachine()
	busy := 0.0
	if d := end.total - start.total; d > 0 {
		busy = (end.busy - start.busy) / d
	}
	return fmt.Sprintf("machine: %d cores, %.0f%% busy over the run (the bench's own work included); load average (1, 5, 15 min) %s at the start, %s at the end",
		runtime.NumCPU(), 100*busy, start.load, end.load)
}
