//go:build !linux

package cursor

import (
	"fmt"
	"os"
)

// guardSupported is false: without parent-death signals a guard would not
// hear its runner die. The next runner ends what is left (EndChild).
const guardSupported = false

func runGuard([]string) int {
	fmt.Fprintln(os.Stderr, "agentctl: the exec guard runs on Linux only")
	return 2
}

// guarded returns args unchanged.
func guarded(args []string) []string { return args }

// guardedCommand is false: there is no guard.
func guardedCommand([]string) bool { return false }
