//go:build !windows

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// ownHubServer keeps the server out of the terminal's process group, so
// that Ctrl+C reaches 'agentctl hub' alone and it stops its runners before
// the server they use; on Linux the server also dies with the hub.
func ownHubServer(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// askHubServerToStop passes on the signal the hub got.
func askHubServerToStop(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
