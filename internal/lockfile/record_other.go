//go:build !windows

package lockfile

// recordAt is where a lock file's record starts: at its start, where a
// lock covers the whole file and no byte of it (see record_windows.go).
const recordAt = 0
