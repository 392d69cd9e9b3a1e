//go:build !linux && !windows

package supervise

import "syscall"

func parentDeath(*syscall.SysProcAttr) {}
