//go:build !windows

package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// replace writes data over path by way of a temporary file. A file
// replaced keeps the permissions it had, so a person's chmod of it lasts;
// a secret (exact) gets perm whatever it had, so no looser mode survives.
func replace(path string, data []byte, perm fs.FileMode, exact bool) error {
	opts := []renameio.Option{renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(perm)}
	if !exact {
		opts = append(opts, renameio.WithExistingPermissions())
	}
	t, err := renameio.NewPendingFile(path, opts...)
	if err != nil {
		return err
	}
	defer t.Cleanup()
	if _, err := t.Write(data); err != nil {
		return err
	}
	return t.CloseAtomicallyReplace()
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
