//go:build !linux && !windows

package cursor

import "syscall"

// setParentDeathSignal does nothing: only Linux has parent-death signals.
// A command that outlives its runner is ended by the next one (EndChild).
func setParentDeathSignal(*syscall.SysProcAttr, bool) {}
