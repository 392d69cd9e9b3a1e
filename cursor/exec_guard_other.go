//go:build !linux

package cursor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// guardSupported is false: without parent-death signals a guard would not
// hear its runner die. The next runner ends what is left (EndChild).
const guardSupported = false

func runGuard([]string) int {
	fmt.Fprintln(os.Stderr, "agentctl: the exec guard runs on Linux only")
	return 2
}

// guardedCommandContext is the command args name, as it is.
func guardedCommandContext(ctx context.Context, args []string) *exec.Cmd {
	return exec.CommandContext(ctx, args[0], args[1:]...)
}

// guardedCommand is false: there is no guard.
func guardedCommand([]string) bool { return false }

// sweepGuard has no guard to ask.
func sweepGuard(*exec.Cmd) {}
