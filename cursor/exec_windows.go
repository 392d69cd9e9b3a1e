package cursor

import (
	"fmt"
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
// Console programs refuse to be asked; the forced kill after the grace ends
// them, so a refusal is no error.
func signalChild(c Child, force bool) error {
	if !force {
		exec.Command("taskkill", "/T", "/PID", strconv.Itoa(c.PID)).Run()
		return nil
	}
	if err := exec.Command("taskkill", "/F", "/T", "/PID", strconv.Itoa(c.PID)).Run(); err != nil {
		return fmt.Errorf("cannot end process %d: %w", c.PID, err)
	}
	return nil
}
