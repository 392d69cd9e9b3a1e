package migrate

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/projectboard"
)

// Every board of the fixture tree is imported with its task count in the
// report; nested boards (phases, agents) become tasks that keep their
// phase and owner, and a duplicate id is kept under a new id, noted in
// the report. The report's count is the board's.
func TestBoardsAsTheyAre(t *testing.T) {
	tree := buildTree(t)
	root := t.TempDir()
	cfg := fiveAgents(t, root)
	p := run(t, tree, root, cfg)

	const boards = "dadudekc-swarm/runtime/agent_comms/central_task_boards/"
	want := map[string][]string{
		boards + "roadmap_phases.json": {"RM-1 Phase 1: foundations Agent-2", "RM-2 Phase 1: foundations -", "RM-2-2 Phase 2: tooling -", "RM-3 Phase 2: tooling Agent-4"},
		boards + "agent_tasks.json":    {"AG-1 - Agent-1", "AG-1-2 - Agent-5", "AG-2 - Agent-5"},
	}
	notes := map[string]string{
		boards + "roadmap_phases.json": "RM-2: a second task with this id (task 3); kept as RM-2-2",
		boards + "agent_tasks.json":    "AG-1: a second task with this id (task 2); kept as AG-1-2",
	}
	n := 0
	for _, f := range p.Files {
		if f.Kind != KindBoard {
			continue
		}
		n++
		data, err := os.ReadFile(f.To)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		b, err := projectboard.Parse(f.To, data)
		if err != nil {
			t.Fatalf("%s: %v", f.To, err)
		}
		if f.Tasks != len(b.Tasks) || f.Tasks == 0 {
			t.Errorf("%s: the report says %d tasks, the board holds %d", f.Path, f.Tasks, len(b.Tasks))
		}
		if w, ok := want[f.Path]; ok {
			var got []string
			for _, task := range b.Tasks {
				phase, _ := task.Extra["phase"].(string)
				got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s %s", task.ID, or(phase), or(task.Owner))))
			}
			if !slices.Equal(got, w) {
				t.Errorf("%s: tasks %q, want %q", f.Path, got, w)
			}
			if !slices.Contains(f.Notes, notes[f.Path]) {
				t.Errorf("%s: notes %q lack %q", f.Path, f.Notes, notes[f.Path])
			}
			delete(want, f.Path)
		}
	}
	if n != 8 || len(want) > 0 {
		t.Errorf("%d boards imported, want 8; not found: %v", n, want)
	}
}

func or(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
