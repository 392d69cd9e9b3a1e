package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// A runner whose log reader is gone (the tee after 'agentctl up 2>&1 |',
// stopped by the same Ctrl+C that stops up) lives on: its log writes
// fail, and it stops in order when asked. It used to die of SIGPIPE at
// its next log line, in the middle of the turn.
func TestRunnerOutlivesTheReaderOfItsLog(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "runtime")
	mustAgentctl(t, root, "init", "--agents", "2")
	// The turn is cut off at once when the runner stops.
	cfg := filepath.Join(root, "agentctl.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, regexp.MustCompile(`(?m)^(\s*shutdown_grace:).*$`).ReplaceAll(data, []byte("${1} 100ms")), 0o644); err != nil {
		t.Fatal(err)
	}
	started := filepath.Join(dir, "started")
	runner := exec.Command("agentctl", "--root", root, "run", "Agent-1", "--", "sh", "-c", "touch "+started+"; cat >/dev/null; sleep 60")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	runner.Stderr = w
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ended := make(chan error, 1)
	go func() { ended <- runner.Wait() }()
	t.Cleanup(func() { runner.Process.Kill(); <-ended })
	if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
		t.Fatalf("the runner wrote no first line: %v", err)
	}
	r.Close()
	mustAgentctl(t, root, "send", "--to", "Agent-1", "--from", "Agent-2", "a long job")
	poll.Until(t, "the agent's command to start", func() bool {
		select {
		case err := <-ended:
			ended <- err
			t.Fatalf("the runner ended before the turn began: %v", err)
		default:
		}
		_, err := os.Stat(started)
		return err == nil
	})
	if err := runner.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("the runner is gone before it was asked to stop: %v", err)
	}
	err = <-ended
	ended <- err
	if err != nil {
		t.Fatalf("the runner stopped with %v; want it to stop in order", err)
	}
}
