//go:build unix

package render

import "syscall"

// syscallKill0 reports whether process pid exists (nil when it does).
func syscallKill0(pid int) error { return syscall.Kill(pid, 0) }
