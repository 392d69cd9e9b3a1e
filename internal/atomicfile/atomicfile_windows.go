//go:build windows

package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/windows"
)

// renameio has no Windows implementation, so Windows gets the same recipe by
// hand: os.Rename is MoveFileEx with MOVEFILE_REPLACE_EXISTING there.
func replace(path string, data []byte, perm fs.FileMode, exact bool) error {
	tmp, err := writeTemp(filepath.Dir(path), filepath.Base(path), data)
	if err != nil {
		return err
	}
	if err := rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// replaceWait bounds how long a replace waits for other processes to close
// the file it replaces.
const replaceWait = 3 * time.Second

// rename moves tmp over path. Windows refuses to replace a file that
// another process holds open without delete sharing, which is how most
// programs open files (Go's os.Open among them): a reader of the old
// version. Readers close soon, so the rename is tried again, backing off,
// for up to replaceWait; then it fails saying why, the old version still in
// place and the caller told, so the write is never silently lost.
func rename(tmp, path string) error {
	deadline := time.Now().Add(replaceWait)
	delay := time.Millisecond
	for {
		err := os.Rename(tmp, path)
		if err == nil || !heldOpen(err) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("another process kept it open for %s: %w", replaceWait, err)
		}
		if heldOpenHook != nil {
			heldOpenHook()
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// heldOpenHook, when set by a test, is called each time a rename found the
// file held open.
var heldOpenHook func()

// heldOpen reports whether a rename failed because another process has the
// destination open.
func heldOpen(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) ||
		errors.Is(err, windows.ERROR_SHARING_VIOLATION) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

// SyncDir is a no-op on Windows, where folders cannot be opened for fsync and
// NTFS journals renames itself.
func SyncDir(string) error { return nil }
