package intake

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// Old-style writers (fixtures/dreamos/layout_writer.py, and inbox_writer.py
// keeping its own inbox.json as a container) write every layout
// the Dream.OS generations used, each file slowly and in pieces, while
// two real consumers run with file events only (no rescan): every message
// arrives once, in its recipient's mailbox, and nothing is dead-lettered.
// Places the consumers may take are emptied; the others are left as the
// writers wrote them.
func TestOldWritersInTheirOwnPlaces(t *testing.T) {
	t.Run("read", func(t *testing.T) { oldWritersInTheirOwnPlaces(t, false) })
	t.Run("take", func(t *testing.T) { oldWritersInTheirOwnPlaces(t, true) })
}

func oldWritersInTheirOwnPlaces(t *testing.T, take bool) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the old-style writers: ", err)
	}
	const each = 30
	root := newRuntime(t, "Agent-1", "Agent-2")
	old := t.TempDir()
	dir := func(parts ...string) string {
		p := filepath.Join(append([]string{old}, parts...)...)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	workspace := dir("agent_workspaces", "Agent-1", "inbox")
	folder := dir("runtime", "agent_comms", "agent_mailboxes", "Agent-1")
	shared := dir("runtime", "agent_comms", "inbox")
	inboxes := dir("inboxes")
	tools := dir("agent_tools", "mailbox", "Agent-1") // an inbox.json of the old writer's own
	writeFile(t, filepath.Join(folder, "status.json"), []byte(`{"status": "idle"}`))

	env := func(agent string, watch ...string) []string {
		e := []string{"MAILBOX_ROOT=" + root, "MAILBOX_AGENT=" + agent, "MAILBOX_DONE=" + filepath.Join(root, "done"),
			"MAILBOX_READY=" + filepath.Join(root, agent+".ready"),
			"MAILBOX_KNOWN=Agent-1,Agent-2", "MAILBOX_SHARED=" + shared, "MAILBOX_SETTLE=1s", "MAILBOX_RESCAN=1h",
			"MAILBOX_WATCH=" + strings.Join(watch, string(os.PathListSeparator))}
		if agent == "Agent-1" {
			e = append(e, "MAILBOX_SHARED_DEADLETTERS=1")
		}
		if take {
			e = append(e, "MAILBOX_TAKE="+strings.Join(append(watch, shared), string(os.PathListSeparator)))
		}
		return e
	}
	consumers := []*exec.Cmd{
		startRole(t, "consume", env("Agent-1", workspace, filepath.Join(folder, "*.json"), filepath.Join(inboxes, "Agent-1.txt"), filepath.Join(tools, "inbox.json"))...),
		startRole(t, "consume", env("Agent-2", filepath.Join(inboxes, "Agent-2.txt"))...),
	}
	// Once the watchers are up only events are seen: no rescan runs.
	waitForFile(t, filepath.Join(root, "Agent-1.ready"))
	waitForFile(t, filepath.Join(root, "Agent-2.ready"))
	writers := []struct {
		layout, path, name string
		to                 []string
	}{
		{"markdown", workspace, "md", []string{"Agent-1"}},
		{"json", folder, "js", []string{"Agent-1"}},
		{"append", filepath.Join(inboxes, "Agent-1.txt"), "ap1", []string{"Agent-1"}},
		{"append", filepath.Join(inboxes, "Agent-2.txt"), "ap2", []string{"Agent-2"}},
		{"shared", shared, "sh", []string{"Agent-1", "Agent-2"}},
	}
	var procs []*exec.Cmd
	for _, w := range writers {
		cmd := exec.Command(python, append([]string{"../../fixtures/dreamos/layout_writer.py", w.layout, w.path, w.name, fmt.Sprint(each)}, w.to...)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	inboxJSON := exec.Command(python, "../../fixtures/dreamos/inbox_writer.py", tools, "ij", fmt.Sprint(each), "--no-ids", "--container")
	inboxJSON.Stderr = os.Stderr
	if err := inboxJSON.Start(); err != nil {
		t.Fatal(err)
	}
	procs = append(procs, inboxJSON)
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("old-style writer: %v", err)
		}
	}
	mb1, mb2 := openMailbox(t, root, "Agent-1"), openMailbox(t, root, "Agent-2")
	total := (len(writers) + 1) * each
	poll.Until(t, fmt.Sprintf("%d receipts archived", total), func() bool { return countArchived(mb1)+countArchived(mb2) >= total })
	for _, c := range consumers {
		stopConsumer(t, root, c)
	}
	got := map[string]map[string]int{"Agent-1": archivedBodies(t, mb1), "Agent-2": archivedBodies(t, mb2)}
	for _, w := range writers {
		for n := range each {
			to := w.to[n%len(w.to)]
			if b := fmt.Sprintf("%s-%d", w.name, n); got[to][b] != 1 {
				t.Errorf("%s archived %d times in %s's mailbox", b, got[to][b], to)
			}
		}
	}
	for n := range each {
		if b := fmt.Sprintf("ij-%d", n); got["Agent-1"][b] != 1 {
			t.Errorf("%s archived %d times in Agent-1's mailbox", b, got["Agent-1"][b])
		}
	}
	var container struct {
		Messages []any          `json:"messages"`
		Metadata map[string]any `json:"metadata"`
	}
	want := 0 // taken: given back empty
	if !take {
		want = each // read: left as its writer wrote it
	}
	if data, err := os.ReadFile(filepath.Join(tools, "inbox.json")); err != nil || json.Unmarshal(data, &container) != nil || container.Messages == nil || len(container.Messages) != want {
		t.Errorf("the old writer's inbox.json does not hold %d messages: %s (%v)", want, data, err)
	}
	for to, bodies := range got {
		for b, n := range bodies {
			if n != 1 || !strings.Contains(b, "-") || strings.ContainsAny(b, "\n#") {
				t.Errorf("%s got %d times the unexpected %q", to, n, b)
			}
		}
	}
	for _, mb := range []*mailbox.Mailbox{mb1, mb2} {
		if dl := names(t, filepath.Join(mb.Dir, mailbox.DeadletterDir)); len(dl) != 0 {
			t.Errorf("%s's deadletter holds %v", mb.Agent, dl)
		}
	}
	left := map[string]int{workspace: 0, folder: 1, shared: 0, inboxes: 2, tools: 2} // inbox.json and its lock
	if !take {
		left = map[string]int{workspace: each, folder: each + 1, shared: each, inboxes: 2, tools: 2}
	}
	for d, want := range left {
		if left := names(t, d); len(left) != want {
			t.Errorf("%s holds %v, want %d files", d, left, want)
		}
	}
}
