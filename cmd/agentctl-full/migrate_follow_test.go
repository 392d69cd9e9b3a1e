package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cmd/internal/migrate"
	"github.com/agentctl/agentctl/mailbox/dreamos"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// Watches follow the old writers after migrate: the per-agent inbox
// folders are watched by one glob, so a folder an old writer makes for a
// new agent is read by the runners; an appended .txt inbox inside an
// inbox folder is read on from where migrate stopped, the message that
// was still being written then taken once by the runner, none taken twice.
func TestMigrateWatchesFollowOldWriters(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the old-style writers: ", err)
	}
	write := func(layout, path, name string, n int, to string) {
		t.Helper()
		cmd := exec.Command(python, "../../fixtures/dreamos/layout_writer.py", layout, path, name, fmt.Sprint(n), to)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("old-style writer: %v\n%s", err, out)
		}
	}
	tree := buildTree(t)
	workspaces := filepath.Join(tree, "dadudekc-swarm", "agent_workspaces")
	appended := filepath.Join(workspaces, "Agent-3", "inbox", "incoming.txt")
	write("append", appended, "old", 2, "Agent-3")
	past := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(appended, past, past); err != nil {
		t.Fatal(err)
	}
	write("append", appended, "late", 1, "Agent-3") // being written as migrate runs
	data, _ := os.ReadFile(appended)
	parts := dreamos.Split(data)
	if len(parts) != 3 {
		t.Fatalf("the old writer appended %d messages, want 3", len(parts))
	}

	root := filepath.Join(t.TempDir(), "runtime")
	mustAgentctl(t, root, "init", "--agents", "5")
	plan := migrateJSON(t, root, tree)
	glob := filepath.Join(workspaces, "*", "inbox")
	if !slices.Contains(plan.Shared, glob) {
		t.Errorf("the report's shared places %q lack the glob %s", plan.Shared, glob)
	}
	for a, places := range plan.Watch {
		for _, pl := range places {
			if strings.HasPrefix(pl, workspaces) {
				t.Errorf("%s watches %s, which the glob covers", a, pl)
			}
		}
	}
	var as []string
	for _, f := range plan.Files {
		if f.Path == "dadudekc-swarm/agent_workspaces/Agent-3/inbox/incoming.txt" {
			if f.Kind != migrate.KindMessages || f.Format != migrate.FormatAppended || f.Watch != glob {
				t.Errorf("incoming.txt: %s %s watched by %q", f.Kind, f.Format, f.Watch)
			}
			for _, m := range f.Messages {
				as = append(as, m.At+" "+m.As)
			}
		}
	}
	if want := []string{"@0 pending", fmt.Sprintf("@%d pending", parts[1].Start), fmt.Sprintf("@%d skipped", parts[2].Start)}; !slices.Equal(as, want) {
		t.Errorf("incoming.txt's messages %q, want %q", as, want)
	}
	// How far migrate read it, for every runner that reads the glob.
	for _, a := range []string{"Agent-1", "Agent-3", "Agent-5"} {
		if off := offsetOf(t, filepath.Join(root, "agent_mailboxes", a), appended); off != int64(parts[1].End) {
			t.Errorf("%s's runner would read incoming.txt from %d, want %d where migrate stopped", a, off, parts[1].End)
		}
	}

	now := time.Now().Add(time.Hour)
	r := startRunners(t, root, now)
	defer func() { r.stop() }()
	got := map[string]map[string]int{}
	r.work(now, got)

	// A new agent's folder, made by the old system after migrate, and a
	// text inbox in it; more appended to the old one.
	fresh := filepath.Join(workspaces, "Agent-5", "inbox")
	if err := os.MkdirAll(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	write("markdown", fresh, "new", 3, "Agent-5")
	write("append", filepath.Join(fresh, "incoming.txt"), "newap", 2, "Agent-5")
	write("append", appended, "more", 2, "Agent-3")
	now = now.Add(time.Hour)
	r.scan(now)
	r.scan(now)
	r.work(now, got)

	for _, w := range []struct {
		to, name string
		n        int
	}{{"Agent-3", "old", 2}, {"Agent-3", "late", 1}, {"Agent-3", "more", 2}, {"Agent-5", "new", 3}, {"Agent-5", "newap", 2}} {
		for i := range w.n {
			if b := fmt.Sprintf("%s-%d", w.name, i); got[w.to][b] != 1 {
				t.Errorf("%s arrived %d times in %s's mailbox", b, got[w.to][b], w.to)
			}
		}
	}
	// None of them went to another agent as well.
	for to, bodies := range got {
		for b, n := range bodies {
			name, _, _ := strings.Cut(b, "-")
			mine := map[string]string{"old": "Agent-3", "late": "Agent-3", "more": "Agent-3", "new": "Agent-5", "newap": "Agent-5"}[name]
			if mine != "" && mine != to {
				t.Errorf("%s got %d times %q, %s's", to, n, b, mine)
			}
		}
	}
}

// offsetOf is how far the intake of the mailbox at dir would go on
// reading the appended file at path (-1: from nowhere recorded).
func offsetOf(t *testing.T, dir, path string) int64 {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(dir, intake.OffsetsDir))
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, intake.OffsetsDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Path   string `json:"path"`
			Offset int64  `json:"offset"`
		}
		if json.Unmarshal(data, &st) == nil && st.Path == path {
			return st.Offset
		}
	}
	return -1
}
