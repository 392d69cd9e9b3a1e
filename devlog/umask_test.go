//go:build unix

package devlog

import (
	"io/fs"
	"os"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/umasktest"
)

// A devlog and its folder follow the umask and are never writable by
// others.
func TestDevlogFollowsTheUmask(t *testing.T) {
	umasktest.Under(t, []int{0o000, 0o002, 0o077}, func(t *testing.T, umask int) {
		root := t.TempDir()
		if err := Append(root, note("Agent-1", "hello")); err != nil {
			t.Fatal(err)
		}
		path, _ := Path(root, "Agent-1")
		for p, want := range map[string]fs.FileMode{
			path:      fs.FileMode(0o666 &^ umask &^ 0o002),
			Dir(root): fs.FileMode(0o777 &^ umask &^ 0o002),
		} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s is %04o, want %04o", p, got, want)
			}
		}
	})
}
