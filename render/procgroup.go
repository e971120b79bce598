package render

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium runs in a process group of its own, with a profile directory
// this package makes, so that Close ends the browser and every process of
// it with one signal and deletes the profile at once. (chromedp, left to
// itself, kills the main process, then looks for the children that
// outlived it in three passes of /proc 10 ms apart, waits 10 ms more and
// deletes: 75-90 ms of every Close, which a one-audit CLI run waits for.)

// processOptions start Chromium in its own process group with profile as
// its profile directory; the kernel still kills it if this process dies
// (Pdeathsig, as chromedp sets by default).
func processOptions(profile string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.UserDataDir(profile),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		}),
	}
}

// killGroup ends the process group of the browser whose main process is
// pid, while that process still runs (the group then cannot have been
// reused). A browser that died on its own has its leftover children
// found by their profile directory instead, which only they name.
func killGroup(pid int, alive bool, profile string) {
	if alive && pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return
	}
	killUsing(profile)
}

// killUsing kills every process whose command line names profile as its
// --user-data-dir.
func killUsing(profile string) {
	want := []byte("--user-data-dir=" + profile)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
			if bytes.Equal(arg, want) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
}

// removeProfile deletes the profile directory once the browser is gone,
// trying again briefly if a dying child still wrote in it.
func removeProfile(profile string) error {
	var err error
	for range 5 {
		if err = os.RemoveAll(profile); err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}
