package mailbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock/clocktest"
)

// A glob over the old per-agent folders is followed by file events: a
// folder an old writer makes for a new agent, and then a message in it,
// are seen as they are written, with the clock stopped, so no periodic
// rescan can be what found them.
func TestWatcherFollowsGlobFolders(t *testing.T) {
	mb := openMailbox(t, newRuntime(t, "Agent-1"), "Agent-1")
	ws := filepath.Join(t.TempDir(), "agent_workspaces")
	if err := os.MkdirAll(filepath.Join(ws, "Agent-1", "inbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(time.Now())
	w, err := Watch(mb, WatchOptions{RescanInterval: time.Hour, Clock: clk, Extra: []string{filepath.Join(ws, "*", "inbox")}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	// An existing folder the glob matches is watched from the start.
	old := filepath.Join(ws, "Agent-1", "inbox", "a.md")
	writeFile(t, old, []byte("hi"))
	for seen := false; !seen; {
		for _, n := range nextChange(t, w).Names {
			seen = seen || n == old
		}
	}

	// A new agent's folder, made whole at once: its making asks for a
	// rescan, and the watch it then gets reports the message written
	// into it.
	staged := filepath.Join(filepath.Dir(ws), "staged")
	if err := os.MkdirAll(filepath.Join(staged, "inbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(ws, "Agent-7", "inbox")
	if err := os.Rename(staged, filepath.Dir(inbox)); err != nil {
		t.Fatal(err)
	}
	for !nextChange(t, w).Rescan {
	}
	fresh := filepath.Join(inbox, "b.md")
	writeFile(t, fresh, []byte("hi"))
	for seen := false; !seen; {
		ch := nextChange(t, w)
		for _, n := range ch.Names {
			seen = seen || n == fresh
		}
	}
}
