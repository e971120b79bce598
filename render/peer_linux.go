//go:build linux

package render

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// procPeers accepts a proxy connection only when the client socket belongs
// to the browser process or one of its descendants (Chromium's network
// service is a child process). It looks the socket up with the kernel's
// socket diagnostics (/proc/net/tcp where those are unavailable) and in
// the processes' fd tables, so a local program that finds the proxy port
// cannot use the proxy, and neither can page script that somehow reached
// loopback directly.
type procPeers struct {
	root int

	mu   sync.Mutex
	pids []int // the browser's process tree, last seen; the last match first
}

// newPeerCheck returns the check for connections to a proxy of the browser
// with process id root. Without /proc it falls back to loopback-only.
func newPeerCheck(root int) peerCheck {
	if root <= 0 {
		return loopbackOnly
	}
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		return loopbackOnly
	}
	pp := &procPeers{root: root}
	return pp.check
}

func (pp *procPeers) check(c net.Conn) error {
	if err := loopbackOnly(c); err != nil {
		return err
	}
	remote, ok1 := c.RemoteAddr().(*net.TCPAddr)
	local, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 || remote.IP.To4() == nil {
		return fmt.Errorf("not an IPv4 TCP connection")
	}
	// The client's socket: bound to its port, connected to the proxy's.
	inode, err := diagInode(remote, local)
	if errors.Is(err, errNoDiag) {
		inode, err = socketInode(remote.Port, local.Port)
	}
	if err != nil {
		return err
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.owns(inode) {
		return nil
	}
	pp.pids = processTree(pp.root)
	if pp.owns(inode) {
		return nil
	}
	return fmt.Errorf("socket %d is not the browser's (process tree of %d)", inode, pp.root)
}

// owns reports whether one of the cached processes holds the socket, and
// moves that process to the front.
func (pp *procPeers) owns(inode uint64) bool {
	want := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	for i, pid := range pp.pids {
		if holdsFile(pid, want) {
			pp.pids[0], pp.pids[i] = pp.pids[i], pp.pids[0]
			return true
		}
	}
	return false
}

// socketInode finds the inode of the IPv4 socket 127.x:clientPort connected
// to the proxy's serverPort.
func socketInode(clientPort, serverPort int) (uint64, error) {
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, fmt.Errorf("read /proc/net/tcp: %w", err)
	}
	return findSocket(data, clientPort, serverPort)
}

// findSocket finds the client's row of the connection in /proc/net/tcp
// text. Only a row with an inode is a live socket: a row whose inode is 0
// belongs to a socket its process already closed (FIN_WAIT, TIME_WAIT, or
// an earlier connection on the same ports), so it is passed over, and
// when no live row is left the connection is errPeerGone rather than a
// stranger's.
func findSocket(data []byte, clientPort, serverPort int) (uint64, error) {
	local := fmt.Sprintf(":%04X", clientPort)
	remote := fmt.Sprintf(":%04X", serverPort)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Scan() // header
	closed := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || !strings.HasSuffix(f[1], local) || !strings.HasSuffix(f[2], remote) {
			continue
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read /proc/net/tcp: inode %q: %w", f[9], err)
		}
		if inode != 0 {
			return inode, nil
		}
		closed = true
	}
	if closed {
		return 0, fmt.Errorf("port %d: %w", clientPort, errPeerGone)
	}
	return 0, fmt.Errorf("no socket for port %d in /proc/net/tcp", clientPort)
}

// holdsFile reports whether process pid has an open fd pointing at link.
func holdsFile(pid int, link string) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if l, err := os.Readlink(dir + e.Name()); err == nil && l == link {
			return true
		}
	}
	return false
}

// processTree lists root and its descendants, the network service first
// when it can be told apart.
func processTree(root int) []int {
	var out, net []int
	queue := []int{root}
	for len(queue) > 0 && len(out)+len(net) < 512 {
		pid := queue[0]
		queue = queue[1:]
		if isNetworkService(pid) {
			net = append(net, pid)
		} else {
			out = append(out, pid)
		}
		queue = append(queue, children(pid)...)
	}
	return append(net, out...)
}

func isNetworkService(pid int) bool {
	cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && bytes.Contains(cmd, []byte("network.mojom.NetworkService"))
}

// children lists the child processes of pid from /proc/PID/task/*/children.
func children(pid int) []int {
	base := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		data, err := os.ReadFile(base + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
