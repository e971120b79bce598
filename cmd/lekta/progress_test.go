//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lekta.dev/lekta/internal/testsite"
)

// openPTY opens a pseudo-terminal: the program writes to tty as to a
// terminal, the test reads what it wrote from pty.
func openPTY(tb testing.TB) (pty, tty *os.File) {
	tb.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		tb.Fatalf("open /dev/ptmx: %v", err)
	}
	fd := int(pty.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		tb.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		tb.Fatalf("pty number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		tb.Fatalf("open tty: %v", err)
	}
	tb.Cleanup(func() { tty.Close(); pty.Close() })
	return pty, tty
}

// TestProgressOnlyOnATerminal: with stderr a terminal, the audit shows its
// current step and the elapsed time there; with stderr a pipe or a file,
// nothing but the report's own output appears, --json stays clean.
func TestProgressOnlyOnATerminal(t *testing.T) {
	serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	site := testsite.Start(t)
	resolve, allow := site.ResolveFlags()
	// Both runs audit one host within the minute: lift the per-host rate.
	args := []string{"audit", "--json", "--allow-addr", allow, "--timeout", "30s", "--data-dir", t.TempDir(), "--rate", "100/1m"}
	for _, r := range resolve {
		args = append(args, "--resolve", r)
	}

	pty, tty := openPTY(t)
	shown := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, pty) // until the pty is closed
		shown <- b.String()
	}()
	var stdout bytes.Buffer
	err := run(context.Background(), append(args, "http://shop.example/js-title.html"), func(string) string { return "" }, &stdout, tty)
	if code := exitCode(err, tty); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	time.Sleep(50 * time.Millisecond) // let the last bytes reach the pty reader
	tty.Close()
	pty.SetReadDeadline(time.Now().Add(2 * time.Second))
	got := <-shown
	for _, want := range []string{"lekta: reading robots.txt … ", "lekta: rendering the page in Chromium … "} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal shows no %q: %q", want, got)
		}
	}
	if !regexp.MustCompile(`… \d+(\.\d+)? (ms|s)`).MatchString(got) {
		t.Errorf("the terminal shows no elapsed time: %q", got)
	}
	if !strings.HasPrefix(stdout.String(), "{") {
		t.Errorf("stdout is not the JSON report alone: %.80q", stdout.String())
	}

	var out, errOut bytes.Buffer
	err = run(context.Background(), append(args, "http://shop.example/js-title.html?pipe"), func(string) string { return "" }, &out, &errOut)
	if code := exitCode(err, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr is not a terminal, yet it got %q", errOut.String())
	}
	if !strings.HasPrefix(out.String(), "{") {
		t.Errorf("stdout is not the JSON report alone")
	}
}
