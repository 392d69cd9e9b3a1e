package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrSwapUnsupported is returned by Swap where the system cannot exchange
// two names in one step; callers fall back to a compare and a replace.
var ErrSwapUnsupported = errors.New("this system cannot exchange two files in one step")

// Swap atomically replaces path with data, as WriteFile does, and returns
// exactly what it replaced: the old file is exchanged with the new one in
// one step (Linux renameat2 RENAME_EXCHANGE), so a write by someone who
// takes no lock (a person saving in an editor) between the caller's read
// and this write is never lost unseen: it comes back as old, for the
// caller to compare with what it read and to put back. path must exist.
func Swap(path string, data []byte) (old []byte, err error) {
	tmp, err := writeTemp(filepath.Dir(path), filepath.Base(path), data)
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer os.Remove(tmp)
	if fi, err := os.Stat(path); err == nil {
		// The new file takes the old one's permissions, as a rename over
		// it would keep them for a person's eyes.
		os.Chmod(tmp, fi.Mode().Perm())
	}
	if err := exchange(tmp, path); err != nil {
		if errors.Is(err, ErrSwapUnsupported) {
			return nil, err
		}
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	old, err = os.ReadFile(tmp)
	if err != nil {
		return nil, fmt.Errorf("cannot read what %s held: %w", path, err)
	}
	return old, SyncDir(filepath.Dir(path))
}
