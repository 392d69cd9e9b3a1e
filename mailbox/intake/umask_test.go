//go:build unix

package intake

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/umasktest"
	"github.com/agentctl/agentctl/mailbox"
)

// What taking in inbox.json and an appended text file makes in a mailbox
// (.ingest/, .offsets/, the empty shape given back) follows the umask and
// is never writable by others.
func TestIntakeFilesFollowTheUmask(t *testing.T) {
	umasktest.Under(t, []int{0o000, 0o002, 0o022, 0o077}, func(t *testing.T, umask int) {
		root := newRuntime(t, "Agent-1")
		mb := openMailbox(t, root, "Agent-1")
		outside := t.TempDir()
		writeFile(t, filepath.Join(mb.Dir, mailbox.InboxJSON), []byte(`[{"id": "m-1", "from": "Agent-2", "to": "Agent-1", "body": "hi"}]`))
		writeFile(t, filepath.Join(outside, "Agent-1.txt"), []byte("# Hello\n**From**: Agent-2\n**Message ID**: md-1\n---\nhi\n\n"))
		now := time.Now().Add(time.Hour) // the appended file has long settled
		c := consume(t, mb, settings{Known: []string{"Agent-1", "Agent-2"}, Watch: []string{filepath.Join(outside, "Agent-1.txt")}}, now)
		if got := claimAll(t, c, now); len(got) != 2 {
			t.Fatalf("claimed %v, want the message of inbox.json and the appended one", got)
		}
		seen := map[string]bool{}
		err := filepath.WalkDir(mb.Dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(mb.Dir, path)
			want := fs.FileMode(0o666 &^ umask &^ 0o002)
			switch {
			case d.IsDir():
				want = fs.FileMode(0o777 &^ umask &^ 0o002)
			case strings.HasSuffix(path, ".lock"):
				want = fs.FileMode(0o660 &^ umask)
			}
			seen[rel] = true
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s is %04o, want %04o", rel, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, made := range []string{mailbox.IngestDir, OffsetsDir, mailbox.InboxJSON, mailbox.InboxJSONLock} {
			if !seen[made] {
				t.Errorf("no %s was made, so none was checked", made)
			}
		}
	})
}
