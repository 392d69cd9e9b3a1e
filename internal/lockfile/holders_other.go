//go:build !linux

package lockfile

// Holders is known only on Linux; elsewhere a lock's holder is known only
// from its Record.
func Holders(path string) (pids []int, known bool) { return nil, false }
