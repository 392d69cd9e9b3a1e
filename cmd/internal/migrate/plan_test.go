package migrate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
)

func TestDecideFile(t *testing.T) {
	for _, c := range []struct {
		rel    string
		kind   Kind
		format Format
		watch  string
	}{
		{"agent_workspaces/Agent-1/inbox/msg_1_Agent-2_to_Agent-1.json", KindMessages, FormatOne, "agent_workspaces/*/inbox"},
		{"agent_workspaces/Agent-1/inbox/inbox.txt", KindMessages, FormatAppended, "agent_workspaces/*/inbox"},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox.json", KindMessages, FormatList, "runtime/agent_comms/agent_mailboxes/*/inbox.json"},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox.txt", KindMessages, FormatAppended, "runtime/agent_comms/agent_mailboxes/*/inbox.txt"},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/x.json", KindMessages, FormatOne, "runtime/agent_comms/agent_mailboxes/*/*.json"},
		{"inboxes/Agent-3.txt", KindMessages, FormatAppended, "inboxes/Agent*.txt"},
		{"inboxes/Agent-4_incoming.txt", KindMessages, FormatAppended, "inboxes/Agent*.txt"},
		{"inboxes/agent_12.txt", KindMessages, FormatAppended, "inboxes/agent*.txt"},
		{"runtime/agent_comms/broadcast/1_ALL.json", KindMessages, FormatOne, "runtime/agent_comms/broadcast"},
		{"runtime/agent_comms/inbox/a.msg", KindMessages, FormatOne, "runtime/agent_comms/inbox"},
		{"ops/messaging/message_queue/queue_1.json", KindMessages, FormatList, ""},
		{"ops/messaging/message_queue/queue_1_corrupted.json", KindHistory, FormatList, ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox_backup_2025.json", KindHistory, FormatList, ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox.json.bak.json", KindHistory, FormatList, ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox_old.json", KindHistory, FormatList, ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/snapshot_1.json", KindHistory, FormatList, ""},
		{"runtime/agent_comms/archive/x_ALL.msg", KindHistory, FormatOne, ""},
		{"agent_workspaces/Agent-3/processed/m.json", KindHistory, FormatList, ""},
		{"agent_workspaces/Agent-3/inbox/INBOX_MESSAGE_1_read.md", KindHistory, FormatOne, ""},
		{"agent_workspaces/Agent-3/inbox/m_processed.md", KindHistory, FormatOne, ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/Agent-2_analysis.txt", KindDocument, "", ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/status_report.md", KindDocument, "", ""},
		{"agent_workspaces/Agent-3/notes.md", KindDocument, "", ""},
		{"agent_workspaces/Agent-3/README.md", KindDocument, "", ""},
		{"agent_workspaces/Agent-3/plan.txt", KindDocument, "", ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/status.json", KindNotOurs, "", ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox.json.lock", KindNotOurs, "", ""},
		{"src/main.py", KindNotOurs, "", ""},
		{"docs/guide.md", KindNotOurs, "", ""},
		{"runtime/config/cursor_agent_coords.json", KindCoords, "", ""},
		{"devlogs/2025-01-01.md", KindDevlog, "", ""},
		{"devlogs/agent-2_cycles.txt", KindDevlog, "", ""},
		{"runtime/devlog/agents/Agent-1.json", KindDevlog, "", ""},
		{"lore/codex.yaml", KindLore, "", ""},
		{"runtime/operational_logs/lore/2025-04-24_21-35-16_lore.md", KindLore, "", ""},
		{"runtime/operational_logs/config/dream_translation.yaml", KindLore, "", ""},
		{"docs/explore.md", KindNotOurs, "", ""},
		{"runtime/agent_comms/central_task_boards/working_tasks.json", KindBoard, "", ""},
	} {
		d := decideFile(c.rel)
		if d.Kind != c.kind || d.Format != c.format || d.Watch != c.watch {
			t.Errorf("%s: %s %q watch %q (%s), want %s %q watch %q", c.rel, d.Kind, d.Format, d.Watch, d.Reason, c.kind, c.format, c.watch)
		}
		if d.Kind != KindMessages && d.Reason == "" && d.Kind != KindCoords && d.Kind != KindDevlog && d.Kind != KindLore && d.Kind != KindBoard {
			t.Errorf("%s: %s without a reason", c.rel, d.Kind)
		}
	}
}

// Text without the shape of a message, where messages would be, is kept as
// a document; the plan reads the folder and writes nothing.
func TestPlanTellsNotesFromMessages(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"inboxes/Agent-1.txt":                    "Thoughts on the parser.\n\nIt is slow on large files.\n",
		"inboxes/Agent-2.txt":                    "# Message\n**From**: Agent-1\n**To**: Agent-2\n---\nShip it.\n\n",
		"agent_workspaces/Agent-1/inbox/todo.md": "- fix the lock\n- rename the board\n",
		"agent_workspaces/Agent-1/inbox/m.md":    "**From:** Agent-2\n**To:** Agent-1\n\nRebase.\n",
	}
	var rels []string
	for rel, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
	}
	cfg, err := config.Parse("x", []byte("agents:\n  - name: Agent-1\n  - name: Agent-2\n"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	p, err := New(context.Background(), dir, rels, cfg, root, time.Now().Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Kind{"inboxes/Agent-1.txt": KindDocument, "inboxes/Agent-2.txt": KindMessages,
		"agent_workspaces/Agent-1/inbox/todo.md": KindDocument, "agent_workspaces/Agent-1/inbox/m.md": KindMessages}
	for _, f := range p.Files {
		if f.Kind != want[f.Path] {
			t.Errorf("%s: %s (%s), want %s", f.Path, f.Kind, f.Reason, want[f.Path])
		}
		if f.Kind == KindDocument && f.Watch != "" {
			t.Errorf("%s: a document is watched", f.Path)
		}
	}
	// The appended inboxes and the inbox/ folders are every agent's, each
	// by a glob that follows agents added later.
	if want := []string{filepath.Join(dir, "agent_workspaces", "*", "inbox"), filepath.Join(dir, "inboxes", "Agent*.txt")}; len(p.Watch) != 0 || !slices.Equal(slices.Sorted(slices.Values(p.Shared)), want) {
		t.Errorf("watch = %v, shared %v, want the places of the two messages only", p.Watch, p.Shared)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("planning wrote into the runtime: %v", entries)
	}
}

// What follows the array of an inbox.json, the stale end of an
// interrupted rewrite, is listed as skipped with where to read it: it may
// hold whole messages, which it used to be said it did not.
func TestPlanNamesTheStaleEndOfAnInboxJSON(t *testing.T) {
	dir := t.TempDir()
	head := `[{"from": "Agent-2", "to": "Agent-1", "id": "m-1", "content": "first"}]`
	p := filepath.Join(dir, "agent_mailboxes", "Agent-1", "inbox.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	tail := `, {"from": "Agent-2", "to": "Agent-1", "id": "m-2", "content": "in the tail"}]`
	if err := os.WriteFile(p, []byte(head+tail), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("x", []byte("agents:\n  - name: Agent-1\n  - name: Agent-2\n"))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := New(context.Background(), dir, []string{"agent_mailboxes/Agent-1/inbox.json"}, cfg, t.TempDir(), time.Now().Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range pl.Files[0].Messages {
		got = append(got, m.At+" "+m.As+" "+m.Reason)
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "[0] pending") ||
		got[1] != fmt.Sprintf("@%d skipped %d bytes after the end of the array, the stale end of an interrupted rewrite, which may hold messages its writer meant to keep; not imported: read them in the file from byte %d", len(head), len(tail), len(head)) {
		t.Errorf("messages:\n%s", strings.Join(got, "\n"))
	}
}
