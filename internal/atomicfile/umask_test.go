//go:build unix

package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/umasktest"
)

// Everything this package creates follows the umask, except that others
// never get write permission.
func TestPermissionsFollowTheUmask(t *testing.T) {
	umasktest.Under(t, []int{0o000, 0o002, 0o022, 0o027, 0o077}, func(t *testing.T, umask int) {
		wantFile := fs.FileMode(0o666 &^ umask &^ 0o002)
		wantDir := fs.FileMode(0o777 &^ umask &^ 0o002)
		dir := filepath.Join(t.TempDir(), "runtime", "locks")
		if err := MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		writers := map[string]func(string) error{
			"WriteFile":       func(p string) error { return WriteFile(p, []byte("x")) },
			"WriteFileNoSync": func(p string) error { return WriteFileNoSync(p, []byte("x")) },
			"Create":          func(p string) error { return Create(p, []byte("x")) },
		}
		for name, write := range writers {
			path := filepath.Join(dir, name)
			if err := write(path); err != nil {
				t.Fatal(err)
			}
			checkPerm(t, path, wantFile)
		}
		checkPerm(t, dir, wantDir)
		checkPerm(t, filepath.Dir(dir), wantDir)
	})
}

func checkPerm(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s is %04o, want %04o", filepath.Base(path), got, want)
	}
}

// A runtime folder is closed to other accounts, whatever the umask gives
// the rest; one that exists already is left as it is.
func TestRuntimeFolderIsClosedToOthers(t *testing.T) {
	umasktest.Under(t, []int{0o000, 0o022, 0o077}, func(t *testing.T, umask int) {
		root := filepath.Join(t.TempDir(), "projects", "runtime")
		if err := MkdirRoot(root); err != nil {
			t.Fatal(err)
		}
		checkPerm(t, root, fs.FileMode(0o770&^umask))
		checkPerm(t, filepath.Dir(root), fs.FileMode(0o777&^umask&^0o002))
		if err := os.Chmod(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := MkdirRoot(root); err != nil {
			t.Fatal(err)
		}
		checkPerm(t, root, 0o755)
	})
}
