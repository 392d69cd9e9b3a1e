package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An exec turn taken by agentctl-full runs its command under a guard
// started as agentctl, the cheaper program to start, when agentctl is
// installed beside it: the command's parent is agentctl.
func TestExecTurnsAreGuardedByAgentctl(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	front := programs(t, dir, true)
	root := filepath.Join(t.TempDir(), "runtime")
	if _, errOut, code := agentctl(t, front, "--root", root, "init", "--agents", "1"); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	conf := "agents:\n  - {name: Agent-1, driver: exec, exec: {command: [/bin/sh, -c, 'exec /bin/readlink /proc/$PPID/exe']}}\n"
	if err := os.WriteFile(filepath.Join(root, "agentctl.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := agentctl(t, front, "--root", root, "prompt", "Agent-1", "who guards you?")
	if code != 0 {
		t.Fatalf("prompt: exit %d\n%s", code, errOut)
	}
	if got := strings.TrimSpace(out); got != front {
		t.Errorf("the turn's command ran under %q, want the guard to be %s", got, front)
	}
}
