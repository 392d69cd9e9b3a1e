//go:build !linux

package process

import "errors"

// GroupOldestStart is known only on Linux.
func GroupOldestStart(pgid int) (uint64, bool, error) {
	return 0, false, errors.ErrUnsupported
}
