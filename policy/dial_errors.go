package policy

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
)

// DialError is a failed connection as the guard reports it: the address the
// caller asked for and a reason in plain words. Dial errors reach the
// submitter's report and, through the render lane's proxy, page script, so
// they never carry what the machine's own error text would: the resolver's
// address, the address a name resolved to, a local port or a file path.
// Unwrap gives the cause for errors.Is (context errors, ErrBlockedAddress).
type DialError struct {
	// Addr is the host:port the caller asked for.
	Addr string
	// Reason says what went wrong, such as "the host name does not resolve".
	Reason string
	// Err is the cause; its text is not part of Error.
	Err error
}

// Error is "dial ADDR: REASON".
func (e *DialError) Error() string { return "dial " + e.Addr + ": " + e.Reason }

// Unwrap returns the cause.
func (e *DialError) Unwrap() error { return e.Err }

// Reasons of a DialError.
const (
	ReasonNoSuchHost     = "the host name does not resolve"
	ReasonDNSTimeout     = "the name server did not answer in time"
	ReasonDNSFailed      = "the host name could not be resolved"
	ReasonRefused        = "the connection was refused"
	ReasonConnectTimeout = "the connection timed out"
	ReasonUnreachable    = "the host is unreachable"
	ReasonReset          = "the connection was reset"
	ReasonConnectFailed  = "the connection failed"
)

// resolveError is the DialError of a failed lookup of addr's host.
func resolveError(addr string, err error) error {
	reason := ReasonDNSFailed
	var dns *net.DNSError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		reason = ReasonDNSTimeout
	case errors.As(err, &dns) && dns.IsNotFound:
		reason = ReasonNoSuchHost
	case errors.As(err, &dns) && dns.IsTimeout:
		reason = ReasonDNSTimeout
	}
	return &DialError{Addr: addr, Reason: reason, Err: err}
}

// connectError is the DialError of failed connection attempts to addr.
func connectError(addr string, err error) error {
	reason := ReasonConnectFailed
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = ReasonRefused
	case errors.Is(err, syscall.ETIMEDOUT), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		reason = ReasonConnectTimeout
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		reason = ReasonUnreachable
	case errors.Is(err, syscall.ECONNRESET):
		reason = ReasonReset
	case errors.Is(err, ErrBlockedAddress):
		// The socket check's refusal names the address the kernel was
		// about to use: a resolved one, so it is not repeated here.
		reason = "the address is not one LektaBot connects to"
	}
	return &DialError{Addr: addr, Reason: reason, Err: err}
}
