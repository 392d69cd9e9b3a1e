//go:build !windows

package codepage

func fromConsole(out []byte) string { return string(out) }
