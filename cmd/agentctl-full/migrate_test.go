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

	"github.com/agentctl/agentctl/cmd/internal/migrate"
)

// buildTree builds the fixture Dream.OS tree in a new folder.
func buildTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dreamos")
	if out, err := exec.Command("sh", "../../fixtures/dreamos/build_tree.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("build_tree.sh: %v\n%s", err, out)
	}
	return dir
}

func migrateJSON(t *testing.T, root string, args ...string) migrate.Plan {
	t.Helper()
	out := mustAgentctl(t, root, append([]string{"migrate", "--json"}, args...)...)
	var p migrate.Plan
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
		if f.Kind == "" || f.Kind != migrate.KindMessages && f.Kind != migrate.KindBoard && f.Kind != migrate.KindCoords && f.Kind != migrate.KindDevlog && f.Kind != migrate.KindLore && f.Reason == "" {
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
	for _, k := range []migrate.Kind{migrate.KindMessages, migrate.KindHistory, migrate.KindDocument, migrate.KindBoard, migrate.KindCoords, migrate.KindDevlog, migrate.KindLore, migrate.KindNotOurs} {
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
