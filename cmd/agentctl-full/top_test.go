//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// tmuxTerm is a private tmux server (its own socket) running one command in
// a 200×40 terminal.
type tmuxTerm struct {
	t      *testing.T
	socket string
}

func startTmux(t *testing.T, dir string, args ...string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: scripts/setup installs it (Debian package tmux)")
	}
	self, err := exec.LookPath("agentctl")
	if err != nil {
		t.Fatal(err)
	}
	tm := &tmuxTerm{t: t, socket: filepath.Join(dir, "tmux.sock")}
	cmd := append([]string{"new-session", "-d", "-x", "200", "-y", "40", "--", self}, args...)
	tm.run(cmd...)
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *tmuxTerm) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (tm *tmuxTerm) screen() string { return tm.run("capture-pane", "-p") }

func (tm *tmuxTerm) keys(keys ...string) { tm.run(append([]string{"send-keys"}, keys...)...) }

// await waits until the screen shows every one of want.
func (tm *tmuxTerm) await(want ...string) string {
	tm.t.Helper()
	var s string
	poll.Until(tm.t, fmt.Sprintf("the terminal to show %q", want), func() bool {
		s = tm.screen()
		all := true
		for _, w := range want {
			all = all && strings.Contains(s, w)
		}
		return all
	})
	return s
}

func TestTopInARealTerminalRetriesADeadLetterAndSkipsAStuckTurn(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "runtime")
	mustAgentctl(t, root, "init", "--agents", "3")

	// A dead letter in Agent-3's mailbox, made by a consumer as a runner makes one.
	mb3, err := mailbox.Open(root, "Agent-3")
	if err != nil {
		t.Fatal(err)
	}
	dead := deadLetter(t, mb3, []string{"Agent-3", "human"}, "the agent crashed")

	// Agent-2's turn never ends: its agent sleeps until skipped.
	script := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(script, []byte(agentScript), 0o600); err != nil {
		t.Fatal(err)
	}
	stuck := strings.TrimSpace(mustAgentctl(t, root, "send", "--to", "Agent-2", "--subject", "endless job", "Think forever."))
	runner := exec.Command("agentctl", "--root", root, "run", "Agent-2", "--", "sh", script)
	runner.Env = append(os.Environ(), "DIR="+dir)
	runner.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Process.Signal(syscall.SIGTERM); runner.Wait() })

	tm := startTmux(t, dir, "--root", root, "top")
	tm.await("Agent-1", "Agent-2", "Agent-3", "DEAD LETTERS (1)", "doomed", "the agent crashed")
	tm.await("working", "endless job")

	// Retry: tab to the dead letters, r.
	tm.keys("Tab")
	tm.keys("r")
	tm.await("back in Agent-3's inbox", "DEAD LETTERS (0)")
	if found, _ := mb3.Locate(dead.ID); len(found) != 1 || found[0].State != mailbox.StatePending {
		t.Fatalf("after r, the dead letter is %+v", found)
	}

	// Skip: tab back to the agents, down to Agent-2, s, then y.
	tm.keys("Tab")
	tm.keys("Down")
	tm.keys("s")
	tm.await("skip Agent-2's turn")
	tm.keys("y")
	tm.await(stuck+" skipped", "DEAD LETTERS (1)")
	mb2, _ := mailbox.Open(root, "Agent-2")
	found, err := mb2.Locate(stuck)
	if err != nil || len(found) != 1 || found[0].State != mailbox.StateDead || !strings.Contains(found[0].Reason, "skipped from agentctl top") {
		t.Fatalf("after s y, the stuck message is %+v (%v)", found, err)
	}
	tm.keys("q")
}
