//go:build !linux && !windows

package cursor

import (
	"context"
	"os/exec"
)

// guardedCommandContext is the command args name, as it is.
func guardedCommandContext(ctx context.Context, args []string) *exec.Cmd {
	return exec.CommandContext(ctx, args[0], args[1:]...)
}

// guardedCommand is false: there is no guard.
func guardedCommand([]string) bool { return false }

// sweepGuard has no guard to ask.
func sweepGuard(*exec.Cmd) {}
