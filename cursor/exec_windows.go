package cursor

import (
	"os/exec"
	"strconv"
	"syscall"

	"agentctl/internal/process"
)

// setProcessGroup gives the command a new process group; taskkill /T then
// ends the whole tree.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := signalChild(Child{PID: cmd.Process.Pid}, true); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// processGroupOf is 0: Windows process groups only route console signals,
// and EndChild finds a command's tree from its pid.
func processGroupOf(*exec.Cmd) int { return 0 }

// childAlive reports whether c's process still runs. What it spawned is
// found only through it: once it has ended, taskkill /T cannot reach its
// orphans.
func childAlive(c Child) (bool, error) { return process.Alive(c.PID), nil }

// signalChild asks c's process tree to close, or with force terminates it.
func signalChild(c Child, force bool) error {
	args := []string{"/T", "/PID", strconv.Itoa(c.PID)}
	if force {
		args = append([]string{"/F"}, args...)
	}
	return exec.Command("taskkill", args...).Run()
}
