//go:build !linux

package cursor

// guardSupported is false: without parent-death signals a guard would not
// hear its runner die. The next runner ends what is left (EndChild).
const guardSupported = false

// enableGuard has no guard to enable.
func enableGuard(string, string) {}
