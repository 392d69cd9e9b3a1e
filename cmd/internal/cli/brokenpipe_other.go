//go:build !unix

package cli

// survivePipeClose: only Unix ends a program for writing to a closed pipe.
func survivePipeClose() {}
