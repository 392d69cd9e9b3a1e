package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/config"
)

func TestDecideFile(t *testing.T) {
	for _, c := range []struct {
		rel    string
		kind   fileKind
		format fileFormat
		watch  string
	}{
		{"agent_workspaces/Agent-1/inbox/msg_1_Agent-2_to_Agent-1.json", kindMessages, formatOne, "agent_workspaces/Agent-1/inbox"},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox.json", kindMessages, formatList, "runtime/agent_comms/agent_mailboxes/Agent-2/inbox.json"},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/x.json", kindMessages, formatOne, "runtime/agent_comms/agent_mailboxes/Agent-2/*.json"},
		{"inboxes/Agent-3.txt", kindMessages, formatAppended, "inboxes/Agent-3.txt"},
		{"inboxes/Agent-4_incoming.txt", kindMessages, formatAppended, "inboxes/Agent-4_incoming.txt"},
		{"runtime/agent_comms/broadcast/1_ALL.json", kindMessages, formatOne, "runtime/agent_comms/broadcast"},
		{"runtime/agent_comms/inbox/a.msg", kindMessages, formatOne, "runtime/agent_comms/inbox"},
		{"ops/messaging/message_queue/queue_1.json", kindMessages, formatList, ""},
		{"ops/messaging/message_queue/queue_1_corrupted.json", kindHistory, formatList, ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox_backup_2025.json", kindHistory, formatList, ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox.json.bak.json", kindHistory, formatList, ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox_old.json", kindHistory, formatList, ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/snapshot_1.json", kindHistory, formatList, ""},
		{"runtime/agent_comms/archive/x_ALL.msg", kindHistory, formatOne, ""},
		{"agent_workspaces/Agent-3/processed/m.json", kindHistory, formatList, ""},
		{"agent_workspaces/Agent-3/inbox/INBOX_MESSAGE_1_read.md", kindHistory, formatOne, ""},
		{"agent_workspaces/Agent-3/inbox/m_processed.md", kindHistory, formatOne, ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/Agent-2_analysis.txt", kindDocument, "", ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/status_report.md", kindDocument, "", ""},
		{"agent_workspaces/Agent-3/notes.md", kindDocument, "", ""},
		{"agent_workspaces/Agent-3/README.md", kindDocument, "", ""},
		{"agent_workspaces/Agent-3/plan.txt", kindDocument, "", ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/status.json", kindNotOurs, "", ""},
		{"runtime/agent_comms/agent_mailboxes/Agent-2/inbox.json.lock", kindNotOurs, "", ""},
		{"src/main.py", kindNotOurs, "", ""},
		{"docs/guide.md", kindNotOurs, "", ""},
		{"runtime/config/cursor_agent_coords.json", kindCoords, "", ""},
		{"devlogs/2025-01-01.md", kindDevlog, "", ""},
		{"runtime/agent_comms/central_task_boards/working_tasks.json", kindBoard, "", ""},
	} {
		d := decideFile(c.rel)
		if d.Kind != c.kind || d.Format != c.format || d.Watch != c.watch {
			t.Errorf("%s: %s %q watch %q (%s), want %s %q watch %q", c.rel, d.Kind, d.Format, d.Watch, d.Reason, c.kind, c.format, c.watch)
		}
		if d.Kind != kindMessages && d.Reason == "" && d.Kind != kindCoords && d.Kind != kindDevlog && d.Kind != kindBoard {
			t.Errorf("%s: %s without a reason", c.rel, d.Kind)
		}
	}
}

// buildTree builds the fixture Dream.OS tree in a new folder.
func buildTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dreamos")
	if out, err := exec.Command("sh", "../../fixtures/dreamos/build_tree.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("build_tree.sh: %v\n%s", err, out)
	}
	return dir
}

func migrateJSON(t *testing.T, root string, args ...string) migrationPlan {
	t.Helper()
	out := mustAgentctl(t, root, append([]string{"migrate", "--json"}, args...)...)
	var p migrationPlan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("migrate --json printed no report: %v\n%s", err, out)
	}
	return p
}

// Every file of the tree is in the report exactly once, and the dry run
// promises what the run then does.
func TestMigrateAccountsForEveryFile(t *testing.T) {
	tree := buildTree(t)
	root := filepath.Join(t.TempDir(), "runtime")
	mustAgentctl(t, root, "init", "--agents", "5")
	dry := migrateJSON(t, root, tree, "--dry-run")
	seen := map[string]int{}
	for _, f := range dry.Files {
		seen[f.Path]++
		if f.Kind == "" || f.Kind != kindMessages && f.Kind != kindBoard && f.Kind != kindCoords && f.Kind != kindDevlog && f.Reason == "" {
			t.Errorf("%s: %q without a reason", f.Path, f.Kind)
		}
	}
	walked := 0
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		walked++
		rel, _ := filepath.Rel(tree, p)
		if n := seen[filepath.ToSlash(rel)]; n != 1 {
			t.Errorf("%s appears %d times in the report", rel, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if walked != len(dry.Files) {
		t.Errorf("the report lists %d files, the tree holds %d", len(dry.Files), walked)
	}
	for _, k := range []fileKind{kindMessages, kindHistory, kindDocument, kindBoard, kindCoords, kindDevlog, kindNotOurs} {
		if dry.Counts[k] == 0 {
			t.Errorf("the fixture tree gave no %s", k)
		}
	}
	if dry.Messages.Pending == 0 || dry.Messages.History == 0 {
		t.Errorf("messages %+v: want some work and some history", dry.Messages)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "agent_mailboxes", "Agent-1", "inbox")); len(entries) != 0 {
		t.Fatalf("the dry run delivered %d messages", len(entries))
	}

	run := migrateJSON(t, root, tree)
	if len(run.Failed) > 0 {
		t.Errorf("the run failed at %q", run.Failed)
	}
	run.DryRun = dry.DryRun
	if !reflect.DeepEqual(dry, run) {
		a, _ := json.MarshalIndent(dry, "", " ")
		b, _ := json.MarshalIndent(run, "", " ")
		t.Errorf("the dry run promised\n%s\nthe run did\n%s", a, b)
	}
	pending := 0
	for _, a := range []string{"Agent-1", "Agent-2", "Agent-3", "Agent-4", "Agent-5"} {
		entries, _ := os.ReadDir(filepath.Join(root, "agent_mailboxes", a, "inbox"))
		pending += len(entries)
	}
	if pending != run.Messages.Pending {
		t.Errorf("%d messages in the inboxes, the report says %d", pending, run.Messages.Pending)
	}
	done := mustAgentctl(t, root, "inbox", "Agent-2", "--state", "done")
	if !strings.Contains(done, "bk-1") {
		t.Errorf("the backup's message is not in Agent-2's archive as history:\n%s", done)
	}
	doc := filepath.Join(root, "dreamos", "documents", "dadudekc-swarm", "runtime", "agent_comms", "agent_mailboxes", "Agent-2", "Agent-2_analysis.txt")
	if _, err := os.Stat(doc); err != nil {
		t.Errorf("the analysis was not kept as a document: %v", err)
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
	p := planMigration(dir, rels, cfg, root, time.Now().Add(time.Hour), 0)
	want := map[string]fileKind{"inboxes/Agent-1.txt": kindDocument, "inboxes/Agent-2.txt": kindMessages,
		"agent_workspaces/Agent-1/inbox/todo.md": kindDocument, "agent_workspaces/Agent-1/inbox/m.md": kindMessages}
	for _, f := range p.Files {
		if f.Kind != want[f.Path] {
			t.Errorf("%s: %s (%s), want %s", f.Path, f.Kind, f.Reason, want[f.Path])
		}
		if f.Kind == kindDocument && f.Watch != "" {
			t.Errorf("%s: a document is watched", f.Path)
		}
	}
	if len(p.Watch["Agent-1"]) != 1 || len(p.Watch["Agent-2"]) != 1 {
		t.Errorf("watch = %v, want the places of the two messages only", p.Watch)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("planning wrote into the runtime: %v", entries)
	}
}
