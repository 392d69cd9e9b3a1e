//go:build !windows

package cursor

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the command in its own process group so that a
// timeout can end everything it spawned, not just the command itself.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
