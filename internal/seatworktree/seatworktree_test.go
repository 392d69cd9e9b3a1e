package seatworktree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// run runs a command in dir and returns its output, failing the test on
// error.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository with one commit, a subfolder, and a change
// of the user's that is not committed.
func newRepo(t *testing.T) string {
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(repo, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	run(t, repo, "git", "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "src", "a.txt"), []byte("one\n"), 0o600)
	run(t, repo, "git", "add", ".")
	run(t, repo, "git", "commit", "-q", "-m", "first")
	os.WriteFile(filepath.Join(repo, "src", "a.txt"), []byte("the user's edit\n"), 0o600)
	return repo
}

// The first run makes the worktree on its own branch, from the user's
// commit; the program works in the same subfolder there; the user's
// checkout is left as it was; later runs use the same worktree, and the
// agent's work in it stays.
func TestEnsureMakesAndKeepsTheSeatsWorktree(t *testing.T) {
	repo := newRepo(t)
	before := run(t, repo, "git", "status", "--porcelain=v1", "--branch")
	head := run(t, repo, "git", "rev-parse", "HEAD")
	path := filepath.Join(t.TempDir(), "runtime", "worktrees", "Agent-1")

	dir, err := Ensure(filepath.Join(repo, "src"), path, "agentctl/Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(path, "src") {
		t.Errorf("dir = %s, want the same subfolder in the worktree", dir)
	}
	if b := run(t, path, "git", "branch", "--show-current"); b != "agentctl/Agent-1" {
		t.Errorf("the worktree is on %q", b)
	}
	if h := run(t, path, "git", "rev-parse", "HEAD"); h != head {
		t.Errorf("the worktree starts at %s, want the user's %s", h, head)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "one\n" {
		t.Errorf("the worktree holds %q, want the committed file", got)
	}
	if after := run(t, repo, "git", "status", "--porcelain=v1", "--branch"); after != before {
		t.Errorf("the user's checkout changed:\n%s\nwas\n%s", after, before)
	}

	os.WriteFile(filepath.Join(dir, "agent.txt"), []byte("work in progress\n"), 0o600)
	again, err := Ensure(filepath.Join(repo, "src"), path, "agentctl/Agent-1")
	if err != nil || again != dir {
		t.Fatalf("second run: %s, %v", again, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "agent.txt")); err != nil {
		t.Errorf("the agent's work is gone: %v", err)
	}
}

// A worktree removed by the person while its branch stays is made again
// on that branch, with the agent's commits.
func TestEnsureReusesTheBranch(t *testing.T) {
	repo := newRepo(t)
	path := filepath.Join(t.TempDir(), "Agent-1")
	dir, err := Ensure(repo, path, "agentctl/Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("agent\n"), 0o600)
	run(t, dir, "git", "add", "b.txt")
	run(t, dir, "git", "commit", "-q", "-m", "agent's work")
	run(t, repo, "git", "worktree", "remove", path)
	if _, err := Ensure(repo, path, "agentctl/Agent-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(path, "b.txt")); err != nil {
		t.Errorf("the branch's commit is not in the new worktree: %v", err)
	}
}

func TestEnsureRefuses(t *testing.T) {
	repo := newRepo(t)
	plain := t.TempDir()
	if _, err := Ensure(plain, filepath.Join(t.TempDir(), "w"), "agentctl/A"); err == nil || !strings.Contains(err.Error(), "not inside a git repository") {
		t.Errorf("outside a repository: %v", err)
	}
	if _, err := Ensure("", filepath.Join(t.TempDir(), "w"), "agentctl/A"); err == nil {
		t.Error("no cwd: no error")
	}
	// A folder in the worktree's place that is not one, here a plain
	// folder inside the repository itself, is neither used nor touched.
	inside := filepath.Join(repo, "runtime", "worktrees", "A")
	os.MkdirAll(inside, 0o700)
	os.WriteFile(filepath.Join(inside, "keep.txt"), []byte("x"), 0o600)
	if _, err := Ensure(repo, inside, "agentctl/A"); err == nil || !strings.Contains(err.Error(), "is not a worktree") {
		t.Errorf("a plain folder in its place: %v", err)
	}
	if _, err := os.Stat(filepath.Join(inside, "keep.txt")); err != nil {
		t.Errorf("the folder was touched: %v", err)
	}
}

// A worktree path given relative to the process's folder lands there, not
// inside the user's checkout: git runs in the repository's top folder,
// which resolved a relative path from there before.
func TestEnsureTakesARelativePathFromTheProcesssFolder(t *testing.T) {
	repo := newRepo(t)
	before := run(t, repo, "git", "status", "--porcelain=v1", "--branch")
	here := t.TempDir()
	t.Chdir(here)
	dir, err := Ensure(filepath.Join(repo, "src"), filepath.Join("runtime", "worktrees", "Agent-1"), "agentctl/Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(here, "runtime", "worktrees", "Agent-1", "src"); dir != want {
		t.Errorf("dir = %s, want %s", dir, want)
	}
	if after := run(t, repo, "git", "status", "--porcelain=v1", "--branch"); after != before {
		t.Errorf("the user's checkout changed:\n%s\nwas\n%s", after, before)
	}
}
