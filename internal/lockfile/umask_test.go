//go:build unix

package lockfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/umasktest"
)

// Lock files follow the umask for the owner and the group but never let
// others open them, even under umask 000; one left readable by others is
// tightened.
func TestLockFilesAreClosedToOthers(t *testing.T) {
	umasktest.Under(t, []int{0o000, 0o002, 0o022, 0o077}, func(t *testing.T, umask int) {
		dir := t.TempDir()
		fresh := filepath.Join(dir, "fresh.lock")
		l := New(fresh)
		if err := l.Lock(); err != nil {
			t.Fatal(err)
		}
		l.Unlock()
		if got, want := perm(t, fresh), fs.FileMode(0o660&^umask); got != want {
			t.Errorf("new lock file is %04o, want %04o", got, want)
		}
		old := filepath.Join(dir, "old.lock")
		if err := os.WriteFile(old, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chmod(old, 0o646)
		New(old)
		if got := perm(t, old); got != 0o640 {
			t.Errorf("a 0646 lock file became %04o, want 0640", got)
		}
	})
}

func perm(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
