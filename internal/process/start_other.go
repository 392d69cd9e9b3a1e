//go:build !linux && !darwin && !windows

package process

import "errors"

// StartTime is known only on Linux, macOS and Windows; elsewhere callers
// trust the pid alone.
func StartTime(pid int) (uint64, error) {
	return 0, errors.ErrUnsupported
}
