package testenv

import (
	"errors"
	"os"
	"path/filepath"
)

// RepoRoot is the folder of the repository's go.mod, found upward from the
// test's working folder (its package's folder), for the tests that run the
// repository's scripts or fixtures.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the repository's go.mod above the working folder")
		}
		dir = parent
	}
}
