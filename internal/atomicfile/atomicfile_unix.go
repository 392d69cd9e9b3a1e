//go:build !windows

package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

func replace(path string, data []byte, perm fs.FileMode) error {
	return renameio.WriteFile(path, data, perm,
		renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(perm))
}

// rename moves tmp over path; POSIX renames replace even a file others
// hold open.
func rename(tmp, path string) error { return os.Rename(tmp, path) }

// SyncDir fsyncs a folder so that renames and links into it are durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
