package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is one `lekta serve` process of one build.
type server struct {
	name string
	cmd  *exec.Cmd
	base string // http://host:port
	dir  string // its data dir
	http *http.Client
}

// startServer starts bin serve with renderers audits at a time on a free
// port with a fresh data dir and limits lifted so the bench's audits of
// one host are never refused.
func startServer(ctx context.Context, name, bin string, renderers int, siteFlags []string) (*server, error) {
	dir, err := os.MkdirTemp("", "lekta-bench-"+name+"-")
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--renderers", strconv.Itoa(renderers),
		"--queue", "1024", "--rate", "1000000/1m", "--per-host-concurrency", "64",
		"--client-rate", "1000000/1m", "--contact", "bench@lekta.invalid"}, siteFlags...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &server{name: name, cmd: cmd, dir: dir, http: &http.Client{Timeout: 2 * time.Minute}}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "lekta: serving on "); ok {
				addr <- strings.TrimSpace(u)
			}
		}
	}()
	select {
	case s.base = <-addr:
	case <-time.After(time.Minute):
		s.stop()
		return nil, fmt.Errorf("%s did not start serving", bin)
	}
	return s, nil
}

// stop ends the server and removes its data dir.
func (s *server) stop() {
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	os.RemoveAll(s.dir)
}

// report is the part of a lekta report the bench reads.
type report struct {
	ID         string    `json:"id"`
	Status     string    `json:"status"`
	Reason     string    `json:"reason"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`
	Lanes      struct {
		Render struct {
			DurationMS int64  `json:"duration_ms"`
			SettledBy  string `json:"settled_by"`
			Page       *struct {
				Title string `json:"title"`
				Links []link `json:"links"`
			} `json:"page"`
		} `json:"render"`
	} `json:"lanes"`
}

type link struct {
	Href string `json:"href"`
}

// answer is one audit as a client of the API sees it.
type answer struct {
	*report
	// client is from sending the POST to reading the report, what the
	// client waits; lag from sending the POST to the audit's start.
	client, lag time.Duration
}

// audit submits url as an API client does, POST then GET ?wait=, and
// returns the report with the client's times.
func (s *server) audit(ctx context.Context, url string) (answer, error) {
	sent := time.Now()
	r, err := s.submitAndWait(ctx, url)
	if err != nil {
		return answer{}, err
	}
	return answer{report: r, client: time.Since(sent), lag: r.StartedAt.Sub(sent)}, nil
}

func (s *server) submitAndWait(ctx context.Context, url string) (*report, error) {
	body, _ := json.Marshal(map[string]string{"url": url})
	req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/api/v1/audits", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: submit %s: %w", s.name, url, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var r report
	if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
		return nil, fmt.Errorf("%s: submit %s: %d %s", s.name, url, resp.StatusCode, b)
	}
	for resp.StatusCode == http.StatusAccepted || r.Status == "" || r.Status == "queued" || r.Status == "running" {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/api/v1/audits/"+r.ID+"?wait=60s", nil)
		if resp, err = s.http.Do(req); err != nil {
			return nil, fmt.Errorf("%s: wait for %s: %w", s.name, r.ID, err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		r = report{}
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: report %s: %d %.300s", s.name, url, resp.StatusCode, b)
		}
		if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: report %s: %d %.300s", s.name, url, resp.StatusCode, b)
		}
	}
	if r.Status != "complete" {
		return nil, fmt.Errorf("%s: %s: %s (%s)", s.name, url, r.Status, r.Reason)
	}
	return &r, nil
}

// cpu is the CPU time the server's whole process tree has used: every
// live process's own time plus what it collected from children that
// ended (Chromium's renderers, one per audit, end with their context).
func (s *server) cpu() time.Duration {
	tick := 100.0 // USER_HZ on Linux
	var total float64
	for _, pid := range tree(s.cmd.Process.Pid) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name, which may hold spaces: 14-17 are
		// utime, stime, cutime, cstime.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		for _, i := range []int{11, 12, 13, 14} {
			if i < len(f) {
				v, _ := strconv.ParseFloat(f[i], 64)
				total += v
			}
		}
	}
	return time.Duration(total / tick * float64(time.Second))
}

// tree lists root and its descendants.
func tree(root int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 {
			ppid, _ := strconv.Atoi(f[1])
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
