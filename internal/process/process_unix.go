//go:build !windows

package process

import (
	"errors"
	"syscall"
)

// Alive reports whether a process with this pid exists on this machine.
// Signal 0 checks without delivering anything; EPERM means it exists but
// belongs to someone else.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
