//go:build windows

package wintest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TempDir is t.TempDir for tests that run under Wine: with Go 1.26 and
// Wine 8, os.RemoveAll (and so t.TempDir's cleanup) fails with "Invalid
// function", as Wine lacks the POSIX delete Go now asks for first. This
// removes the folder file by file with os.Remove, which works on both.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agentctl-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var paths []string
		filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error {
			paths = append(paths, p)
			return nil
		})
		slices.Reverse(paths) // children before their folders
		for _, p := range paths {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				t.Errorf("cannot clean up %s: %v", p, err)
			}
		}
	})
	return dir
}
