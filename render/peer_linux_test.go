//go:build linux

package render

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFindSocket(t *testing.T) {
	t.Parallel()
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	row := func(state, inode string) string {
		return "   0: 0100007F:A000 0100007F:1F90 " + state + " 00000000:00000000 00:00000000 00000000     0        0 " + inode + " 1 0000000000000000 20 4 30 10 -1\n"
	}
	tests := []struct {
		name string
		rows string
		want uint64
		gone bool
	}{
		{"live row", row("01", "4242"), 4242, false},
		{"closed row before the live one", row("06", "0") + row("01", "4242"), 4242, false},
		{"closed row only", row("04", "0"), 0, true},
	}
	for _, tc := range tests {
		got, err := findSocket([]byte(header+tc.rows), 0xA000, 0x1F90)
		if got != tc.want || errors.Is(err, errPeerGone) != tc.gone {
			t.Errorf("%s: findSocket = %d, %v; want %d (gone %v)", tc.name, got, err, tc.want, tc.gone)
		}
	}
}

// TestPeerCheckClosedConnection: a connection its client closed before the
// check ran is reported as gone, not as a stranger's, while one that is
// still open passes.
func TestPeerCheckClosedConnection(t *testing.T) {
	t.Parallel()
	check := newPeerCheck(os.Getpid())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accept := func(closeFirst bool) error {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if closeFirst {
			c.Close()
			time.Sleep(50 * time.Millisecond) // the FIN reaches the server's end
		} else {
			defer c.Close()
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return check(s)
	}
	if err := accept(false); err != nil {
		t.Errorf("own open connection: %v", err)
	}
	if err := accept(true); err == nil || !strings.Contains(err.Error(), "closed before it could be checked") {
		t.Errorf("own closed connection: %v; want it reported as closed before the check", err)
	}
}

// TestPeerCheckUnderParallelRenders: four renders at once, each opening
// many connections (plain and TLS), lose no request to the peer check.
func TestPeerCheckUnderParallelRenders(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	for i := range 4 {
		scheme := []string{"http", "https"}[i%2]
		t.Run(scheme+"-"+itoa(i), func(t *testing.T) {
			t.Parallel()
			var page strings.Builder
			page.WriteString("<!DOCTYPE html><title>many</title><p id=out>many</p><script>\n")
			for j := range 24 {
				page.WriteString("fetch('/n?peer" + itoa(j) + "', {cache: 'no-store'}).catch(e => console.error('fetch failed: ' + e));\n")
			}
			page.WriteString("</script>")
			snap, err := renderTestPage(t, b, s, scheme+"://"+hostFor(t), page.String(), Request{})
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if len(snap.Render.FailedRequests) > 0 || len(snap.Render.ConsoleErrors) > 0 {
				t.Errorf("requests failed: %+v %v", snap.Render.FailedRequests, snap.Render.ConsoleErrors)
			}
		})
	}
}

// TestDiagInode: the kernel's socket diagnostics name the same socket as
// the process's own fd table and /proc/net/tcp, for the client's end of a
// connection, and say gone once the client closed it.
func TestDiagInode(t *testing.T) {
	t.Parallel()
	c, s := loopbackPair(t)
	defer s.Close()
	f, err := c.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	link, err := os.Readlink("/proc/self/fd/" + itoa(int(f.Fd())))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	client, server := s.RemoteAddr().(*net.TCPAddr), s.LocalAddr().(*net.TCPAddr)
	got, err := diagInode(client, server)
	if err != nil {
		t.Fatalf("diagInode: %v", err)
	}
	if want := "socket:[" + strconv.FormatUint(got, 10) + "]"; link != want {
		t.Errorf("diagInode = %s, the client's fd is %s", want, link)
	}
	if proc, err := socketInode(client.Port, server.Port); err != nil || proc != got {
		t.Errorf("/proc/net/tcp says %d (%v), diagnostics %d", proc, err, got)
	}
	c.Close()
	time.Sleep(50 * time.Millisecond) // the FIN reaches the server's end
	if _, err := diagInode(client, server); !errors.Is(err, errPeerGone) {
		t.Errorf("after the client closed: %v, want errPeerGone", err)
	}
}

// BenchmarkSocketLookup: finding a connection's socket with the kernel's
// diagnostics against reading /proc/net/tcp.
func BenchmarkSocketLookup(b *testing.B) {
	c, s := loopbackPair(b)
	defer c.Close()
	defer s.Close()
	client, server := c.LocalAddr().(*net.TCPAddr), c.RemoteAddr().(*net.TCPAddr)
	b.Run("diag", func(b *testing.B) {
		for b.Loop() {
			if _, err := diagInode(client, server); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proc", func(b *testing.B) {
		for b.Loop() {
			if _, err := socketInode(client.Port, server.Port); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// loopbackPair is both ends of a fresh loopback TCP connection: the
// client's and the one its listener accepted.
func loopbackPair(tb testing.TB) (client, server net.Conn) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	if client, err = net.Dial("tcp", ln.Addr().String()); err != nil {
		tb.Fatal(err)
	}
	if server, err = ln.Accept(); err != nil {
		client.Close()
		tb.Fatal(err)
	}
	return client, server
}
