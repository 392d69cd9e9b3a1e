// Package seatworktree gives a seat a git worktree of its own: a checkout
// of the user's repository, on a branch of its own, where the seat's
// program works without touching the user's checkout.
//
// The one thing it does to the user's repository is `git worktree add`,
// which records the new worktree and its branch in the repository's git
// folder; it never checks out, commits, resets or cleans there. A worktree
// made once is kept and used again by every later run; removing it is
// left to the person (git worktree remove).
package seatworktree

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Ensure returns the folder the seat's program works in: the worktree at
// path, on branch, of the repository holding cwd, made now if it is not
// there yet. When cwd is a folder inside the repository, the result is
// the same folder inside the worktree.
func Ensure(cwd, path, branch string) (string, error) {
	if cwd == "" {
		return "", errors.New("worktree: the seat has no cwd; set cwd to a folder inside the git repository the seat works on")
	}
	// git runs in the repository's top folder, where a relative path would
	// name a folder inside the user's checkout.
	path, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	top, err := git(cwd, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("worktree: cwd %s is not inside a git repository: %w", cwd, err)
	}
	rel, err := subfolder(cwd, top)
	if err != nil {
		return "", err
	}
	common, err := commonDir(top)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err == nil {
		if err := sameRepository(path, common); err != nil {
			return "", err
		}
		return filepath.Join(path, rel), nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("worktree: cannot make the folder for %s: %w", path, err)
	}
	args := []string{"worktree", "add", path, branch}
	if _, err := git(top, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err != nil {
		// No such branch yet: it starts where the user's checkout is.
		args = []string{"worktree", "add", "-b", branch, path}
	}
	if _, err := git(top, args...); err != nil {
		// Another runner of the seat may have made it meanwhile.
		if serr := sameRepository(path, common); serr == nil {
			return filepath.Join(path, rel), nil
		}
		return "", fmt.Errorf("worktree: cannot make the seat's worktree: %w", err)
	}
	return filepath.Join(path, rel), nil
}

// subfolder is where cwd is inside the repository's top folder.
func subfolder(cwd, top string) (string, error) {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", err
	}
	// git names the top folder with links resolved.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("worktree: cannot tell where %s is inside the repository %s", cwd, top)
	}
	return rel, nil
}

// commonDir is the git folder the repository's worktrees share.
func commonDir(dir string) (string, error) {
	c, err := git(dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("worktree: cannot find the git folder of %s: %w", dir, err)
	}
	return filepath.Clean(c), nil
}

// sameRepository checks that path is a worktree of the repository whose
// git folder is common: a folder in its place that is anything else is
// not used, nor touched.
func sameRepository(path, common string) error {
	c, err := commonDir(path)
	top, terr := git(path, "rev-parse", "--show-toplevel")
	real, rerr := filepath.EvalSymlinks(path)
	// A plain folder inside the repository (a runtime folder kept in
	// it) names the same git folder: only a worktree's top is its own.
	if err != nil || c != common || terr != nil || rerr != nil || filepath.Clean(top) != real {
		return fmt.Errorf("worktree: %s exists but is not a worktree of the repository at %s; move it away, or remove it with git worktree remove", path, filepath.Dir(common))
	}
	return nil
}

// git runs git in dir and returns what it printed, trimmed.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], msg)
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(stdout.String()), nil
}
