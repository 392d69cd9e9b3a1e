//go:build !linux

package execguard

import (
	"fmt"
	"os"
)

// Run refuses: without parent-death signals a guard would not hear its
// runner die. The next runner ends what is left.
func Run([]string) int {
	fmt.Fprintln(os.Stderr, "agentctl: the exec guard runs on Linux only")
	return 2
}

// Host refuses, as Run does.
func Host([]string) int {
	fmt.Fprintln(os.Stderr, "agentctl: the exec host runs on Linux only")
	return 2
}
