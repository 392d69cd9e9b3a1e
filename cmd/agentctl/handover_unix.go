//go:build unix

package main

import (
	"os"
	"syscall"
)

// runFull replaces this process with the full program: the same pid, so
// whatever supervises it, signals it or feeds its stdin reaches the
// command itself. It returns only when the exec failed.
func runFull(path string, argv []string) error {
	return syscall.Exec(path, argv, os.Environ())
}
