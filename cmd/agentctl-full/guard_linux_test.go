package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
)

// leaverScript works on a turn for a day, longer than any test's
// -timeout, below a grandchild in its group and one that left it
// (setsid), both deaf to SIGTERM and SIGHUP, whose pids it notes in $DIR.
const leaverScript = `cat >/dev/null
(trap "" TERM HUP; exec sleep 86400) & echo $! > "$DIR/grandchild.tmp" && mv "$DIR/grandchild.tmp" "$DIR/grandchild"
setsid sh -c 'trap "" TERM HUP; echo $$ > "$DIR/escaped.tmp" && mv "$DIR/escaped.tmp" "$DIR/escaped"; exec sleep 86400' &
sleep 86400
`

// A real agentctl run killed by SIGKILL mid-turn takes along every
// process of the turn: its guard kills them all.
func TestKilledRunnerLeavesNoProcessOfItsTurn(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "runtime")
	mustAgentctl(t, root, "init", "--agents", "2")
	script := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(script, []byte(leaverScript), 0o600); err != nil {
		t.Fatal(err)
	}
	mustAgentctl(t, root, "send", "--to", "Agent-1", "--from", "Agent-2", "--subject", "long job", "Work.")
	runner := exec.Command("agentctl", "--root", root, "run", "Agent-1", "--", "sh", script)
	runner.Env = append(os.Environ(), "DIR="+dir)
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the turn's processes to start", func() bool {
		_, err1 := os.Stat(filepath.Join(dir, "grandchild"))
		_, err2 := os.Stat(filepath.Join(dir, "escaped"))
		return err1 == nil && err2 == nil
	})
	grandchild, escaped := readPID(t, filepath.Join(dir, "grandchild")), readPID(t, filepath.Join(dir, "escaped"))
	t.Cleanup(func() {
		syscall.Kill(grandchild, syscall.SIGKILL)
		syscall.Kill(escaped, syscall.SIGKILL)
	})
	runner.Process.Kill()
	runner.Wait()
	poll.Until(t, "the turn's processes to end with the runner", func() bool { return gone(grandchild) && gone(escaped) })
}

// A seat with worktree: true works in its own git worktree, made on its
// first turn; the user's checkout keeps its branch and its uncommitted
// change.
func TestSeatWorksInItsWorktree(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	os.MkdirAll(filepath.Join(repo, "src"), 0o700)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "src", "a.txt"), []byte("one\n"), 0o600)
	git("add", ".")
	git("commit", "-q", "-m", "first")
	os.WriteFile(filepath.Join(repo, "src", "a.txt"), []byte("the user's edit\n"), 0o600)
	before := git("status", "--porcelain=v1", "--branch")

	root := filepath.Join(dir, "runtime")
	mustAgentctl(t, root, "init", "--agents", "1")
	cfg := "agents:\n  - {name: Agent-1, driver: exec, exec: {command: [sh, -c, 'cat >/dev/null; pwd; git branch --show-current']}, cwd: " + filepath.Join(repo, "src") + ", worktree: true}\n"
	if err := os.WriteFile(filepath.Join(root, "agentctl.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "worktrees", "Agent-1", "src") + "\nagentctl/Agent-1\n"
	for i := 0; i < 2; i++ {
		if got := mustAgentctl(t, root, "prompt", "Agent-1", "where are you?"); got != want {
			t.Errorf("turn %d ran in:\n%s\nwant\n%s", i+1, got, want)
		}
	}
	if after := git("status", "--porcelain=v1", "--branch"); after != before {
		t.Errorf("the user's checkout changed:\n%s\nwas\n%s", after, before)
	}
}
