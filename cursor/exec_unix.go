//go:build !windows

package cursor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"

	"github.com/agentctl/agentctl/internal/process"
)

// command is the command args name, started as it is, or through the
// guard where there is one (exec_guard_linux.go).
func command(ctx context.Context, args []string) (*exec.Cmd, error) {
	return guardedCommandContext(ctx, args), nil
}

// setProcessGroup starts the command in its own process group so that a
// timeout can end everything it spawned, not just the command itself.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr, guardedCommand(cmd.Args))
}

// afterStart has nothing to do: the process group is set at start.
func afterStart(*exec.Cmd) error { return nil }

func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	sweepGuard(cmd)
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// processGroupOf is the group setProcessGroup gave the started command.
func processGroupOf(cmd *exec.Cmd) int { return cmd.Process.Pid }

// childAlive reports whether anything of c's process group still runs.
func childAlive(c Child) (bool, error) { return process.GroupAlive(c.PGID) }

// signalChild asks c's whole process group to stop, or with force kills it.
func signalChild(c Child, force bool) error {
	if c.PGID <= 1 || c.PGID == syscall.Getpgrp() {
		return fmt.Errorf("refusing to signal process group %d", c.PGID)
	}
	sig := syscall.SIGTERM
	if force {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-c.PGID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("cannot signal process group %d: %w", c.PGID, err)
	}
	return nil
}
