//go:build !linux && !windows

package process

import (
	"errors"
	"syscall"
)

// GroupAlive reports whether any process of the process group pgid still
// exists. Without /proc, a zombie member counts; init reaps those promptly.
func GroupAlive(pgid int) (bool, error) {
	if pgid <= 0 {
		return false, nil
	}
	err := syscall.Kill(-pgid, 0)
	switch {
	case err == nil || errors.Is(err, syscall.EPERM):
		return true, nil
	case errors.Is(err, syscall.ESRCH):
		return false, nil
	}
	return false, err
}
