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

// enableGuard has no guard to enable.
func enableGuard(string, string) {}
