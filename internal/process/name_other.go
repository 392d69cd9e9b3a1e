//go:build !linux

package process

// Name is known only on Linux.
func Name(pid int) string { return "" }
