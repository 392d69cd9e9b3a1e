//go:build !linux

package atomicfile

func exchange(a, b string) error { return ErrSwapUnsupported }
