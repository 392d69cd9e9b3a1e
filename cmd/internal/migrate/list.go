package migrate

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// List lists the regular files under dir, relative and slash-separated,
// and the folders it does not go into (version control, caches, the
// runtime itself), each ending in "/". What it cannot read is returned
// apart, with why: such a folder may hold messages, so the report names it
// and migrate fails.
// It stops when ctx ends.
func List(ctx context.Context, dir, runtimeRoot string) (files []string, unreadable map[string]error, err error) {
	rootAbs, _ := filepath.Abs(runtimeRoot)
	unreadable = map[string]error{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if err != nil {
			if p == dir {
				return err
			}
			if d != nil && d.IsDir() {
				rel += "/"
			}
			unreadable[rel] = err
			return nil
		}
		if d.IsDir() {
			if p != dir && (slices.Contains(skipDirs, d.Name()) || p == rootAbs) {
				files = append(files, rel+"/")
				return filepath.SkipDir
			}
			return nil
		}
		files = append(files, rel)
		return nil
	})
	sort.Strings(files)
	return files, unreadable, err
}

func AgentsIn(files []string) int {
	seen := map[string]bool{}
	for _, rel := range files {
		if d := decideFile(rel); d.Agent != "" {
			seen[strings.ToLower(d.Agent)] = true
		}
	}
	return len(seen)
}

// GitCheckout reports whether dir is, or is inside, a git work tree: the
// user's history, which nothing here may change.
func GitCheckout(dir string) bool {
	if git, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command(git, "-C", dir, "rev-parse", "--is-inside-work-tree").Output()
		if err == nil {
			return strings.TrimSpace(string(out)) == "true"
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}
