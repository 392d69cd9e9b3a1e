//go:build !linux

package main

// releaseProgramPages does nothing here: the program's pages are left to
// the system.
func releaseProgramPages() {}
