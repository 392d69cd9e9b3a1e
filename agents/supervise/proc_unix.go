//go:build !windows

package supervise

import (
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup keeps a child out of the terminal's process group, so
// that Ctrl+C reaches the supervisor alone and it stops the children in
// order; on Linux a child also dies with the supervisor (parentDeath).
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	parentDeath(cmd.SysProcAttr)
}

// askToStop asks a runner to finish its step and stop, as Ctrl+C would.
func askToStop(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
