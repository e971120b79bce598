//go:build linux

package render

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// The layout of the kernel's socket-diagnostics messages (linux/inet_diag.h):
// a request is a netlink header and an inet_diag_req_v2, an answer a header
// and an inet_diag_msg.
const (
	diagReqLen   = unix.SizeofNlMsghdr + 8 + diagIDLen // header, family..states, sockid
	diagIDLen    = 48                                  // ports, 2×16-byte addresses, interface, cookie
	diagMsgLen   = 4 + diagIDLen + 5*4                 // family..retrans, sockid, expires..inode
	diagInodeAt  = 4 + diagIDLen + 4*4                 // inode's offset in inet_diag_msg
	diagNoCookie = 0xffffffff                          // INET_DIAG_NOCOOKIE, each half
)

// errNoDiag: the kernel's socket diagnostics are not available here.
var errNoDiag = errors.New("socket diagnostics unavailable")

// diagInode asks the kernel for the inode of the IPv4 TCP socket bound to
// local and connected to remote: one exact lookup (NETLINK_SOCK_DIAG), not
// a read of every socket on the machine as /proc/net/tcp is (2.4 ms with
// 170 sockets here, and more with every connection in TIME_WAIT). A socket
// whose process closed it (TIME_WAIT, or gone altogether) is errPeerGone.
func diagInode(local, remote *net.TCPAddr) (uint64, error) {
	l4, r4 := local.IP.To4(), remote.IP.To4()
	if l4 == nil || r4 == nil {
		return 0, errors.New("not an IPv4 connection")
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errNoDiag, err)
	}
	defer unix.Close(fd)
	// The kernel answers at once; the timeout only guards against a bug.
	tv := unix.Timeval{Sec: 1}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return 0, fmt.Errorf("%w: %w", errNoDiag, err)
	}
	req := make([]byte, diagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], diagReqLen)
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // sequence
	r := req[unix.SizeofNlMsghdr:]
	r[0], r[1] = unix.AF_INET, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], 0xffffffff) // every state
	id := r[8:]
	binary.BigEndian.PutUint16(id[0:], uint16(local.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(remote.Port))
	copy(id[4:], l4)
	copy(id[20:], r4)
	ne.PutUint32(id[40:], diagNoCookie)
	ne.PutUint32(id[44:], diagNoCookie)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("%w: %w", errNoDiag, err)
	}
	buf := make([]byte, 512)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errNoDiag, err)
	}
	return parseDiag(buf[:n], local.Port)
}

// parseDiag reads the inode from the kernel's answer to diagInode.
func parseDiag(b []byte, port int) (uint64, error) {
	ne := binary.NativeEndian
	if len(b) < unix.SizeofNlMsghdr {
		return 0, fmt.Errorf("%w: short answer", errNoDiag)
	}
	switch ne.Uint16(b[4:]) {
	case unix.NLMSG_ERROR:
		if len(b) < unix.SizeofNlMsghdr+4 {
			return 0, fmt.Errorf("%w: short error", errNoDiag)
		}
		errno := syscall.Errno(-int32(ne.Uint32(b[unix.SizeofNlMsghdr:])))
		if errno == unix.ENOENT {
			return 0, fmt.Errorf("port %d: %w", port, errPeerGone)
		}
		return 0, fmt.Errorf("%w: %w", errNoDiag, errno)
	case unix.SOCK_DIAG_BY_FAMILY:
		if len(b) < unix.SizeofNlMsghdr+diagMsgLen {
			return 0, fmt.Errorf("%w: short message", errNoDiag)
		}
		inode := ne.Uint32(b[unix.SizeofNlMsghdr+diagInodeAt:])
		if inode == 0 {
			return 0, fmt.Errorf("port %d: %w", port, errPeerGone)
		}
		return uint64(inode), nil
	}
	return 0, fmt.Errorf("%w: message type %d", errNoDiag, ne.Uint16(b[4:]))
}
