//go:build unix

package mailbox

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/umasktest"
)

// Everything a message's life creates in a mailbox and under locks/
// follows the umask, is never writable by others, and lock files give
// others nothing at all.
func TestMailboxFilesFollowTheUmask(t *testing.T) {
	umasktest.Under(t, []int{0o000, 0o002, 0o022, 0o077}, func(t *testing.T, umask int) {
		root := newRuntime(t, "Agent-1")
		mb := openMailbox(t, root, "Agent-1")
		if err := mb.Deliver(testMessage("m-1", "Agent-1", Normal)); err != nil {
			t.Fatal(err)
		}
		writeFile(t, inboxPath(mb, "dropped.json"), []byte(`{"id": "m-2", "from": "Agent-2", "to": "Agent-1", "body": "hi"}`))
		c := consume(t, mb, Options{}, t0)
		for range 2 {
			cl, err := c.Claim(t0)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Record(cl, "worked", t0); err != nil {
				t.Fatal(err)
			}
			if err := c.Complete(cl, Receipt{Reply: "ok"}, t0.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		if err := mb.WriteStatus(Status{State: "idle"}); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			want := fs.FileMode(0o666 &^ umask &^ 0o002)
			switch {
			case d.IsDir():
				want = fs.FileMode(0o777 &^ umask &^ 0o002)
			case strings.HasSuffix(path, ".lock"):
				want = fs.FileMode(0o660 &^ umask)
			}
			if path == root || rel == filepath.Join("agent_mailboxes", "Agent-1", InboxDir, "dropped.json") {
				return nil // made by the test
			}
			seen[filepath.Ext(rel)] = true
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s is %04o, want %04o", rel, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{".lock", ".json", ".jsonl"} {
			if !seen[ext] {
				t.Errorf("no %s file was made, so none was checked", ext)
			}
		}
	})
}
