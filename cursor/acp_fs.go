package cursor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// insideDir resolves path, which must be absolute (as the protocol wants),
// and refuses it unless it lies inside dir once both are cleaned and their
// symbolic links resolved. A file that does not exist yet is judged by
// its nearest existing parent, so a link in its folder cannot lead out;
// a link whose target does not exist yet is judged by that target, where
// a write through it would land.
func insideDir(dir, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%q is not an absolute path", path)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("cannot resolve the seat's folder %s: %w", dir, err)
	}
	p := filepath.Clean(path)
	resolved, rest := p, ""
	for links := 0; ; {
		r, err := filepath.EvalSymlinks(resolved)
		if err == nil {
			resolved = filepath.Join(r, rest)
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if target, err := os.Readlink(resolved); err == nil {
			if links++; links > 40 {
				return "", fmt.Errorf("cannot resolve %s: too many links", p)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(resolved), target)
			}
			resolved = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(resolved)
		if parent == resolved {
			return "", fmt.Errorf("cannot resolve %s", p)
		}
		rest = filepath.Join(filepath.Base(resolved), rest)
		resolved = parent
	}
	rel, err := filepath.Rel(root, resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s is outside the seat's folder %s", path, dir)
	}
	return resolved, nil
}

// readLines returns limit lines of text from line (1-based); zero values
// mean from the start, and to the end.
func readLines(text string, line, limit int) string {
	if line <= 1 && limit <= 0 {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	start := max(line-1, 0)
	if start >= len(lines) {
		return ""
	}
	end := len(lines)
	if limit > 0 && start+limit < end {
		end = start + limit
	}
	return strings.Join(lines[start:end], "")
}

// writeFileIn writes a file the agent asked for, inside dir only, keeping
// an existing file's permissions.
func writeFileIn(dir, path, content string) error {
	p, err := insideDir(dir, path)
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(p); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), mode)
}
