//go:build windows

package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// renameio has no Windows implementation, so Windows gets the same recipe by
// hand: os.Rename is MoveFileEx with MOVEFILE_REPLACE_EXISTING there.
func replace(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(filepath.Dir(path), filepath.Base(path), data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// SyncDir is a no-op on Windows, where folders cannot be opened for fsync and
// NTFS journals renames itself.
func SyncDir(string) error { return nil }
