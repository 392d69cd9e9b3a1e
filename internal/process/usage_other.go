//go:build !linux

package process

import "errors"

// CPUTicks is known only on Linux.
func CPUTicks(pid int) (int, error) { return 0, errors.ErrUnsupported }

// RSSKB is known only on Linux.
func RSSKB(pid int) (int, error) { return 0, errors.ErrUnsupported }

// PSSKB is known only on Linux.
func PSSKB(pid int) (int, error) { return 0, errors.ErrUnsupported }
