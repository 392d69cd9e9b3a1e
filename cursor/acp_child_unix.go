//go:build !windows

package cursor

import "syscall"

// askToStop asks the agent itself, not its group, to stop.
func askToStop(c Child) { syscall.Kill(c.PID, syscall.SIGTERM) }
