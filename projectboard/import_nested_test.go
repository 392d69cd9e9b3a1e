package projectboard

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Boards as Dream.OS kept them nested: phases holding tasks, agents
// holding theirs, a board keyed by agent name. Every task is kept with its
// phase and its owner; a second task under an id already used is kept
// under a new id, with a warning that says so.
func TestImportNestedBoards(t *testing.T) {
	for _, c := range []struct {
		name, json string
		want       []string // id phase owner title
		warnings   []string
	}{
		{"phases.json", `{"project": "swarm", "phases": [
			{"name": "Phase 1", "tasks": [{"task_id": "P-1", "title": "lock"}, {"task_id": "P-2", "title": "queue", "assigned_to": "Agent-2"}]},
			{"name": "Phase 2", "tasks": [{"task_id": "P-2", "title": "queue again"}, {"task_id": "P-3", "title": "docs", "phase": "own"}]}]}`,
			[]string{"P-1 Phase 1 - lock", "P-2 Phase 1 Agent-2 queue", "P-2-2 Phase 2 - queue again", "P-3 own - docs"},
			[]string{"P-2: a second task with this id (task 3); kept as P-2-2"}},
		{"phases_map.json", `{"phases": {"alpha": [{"id": "A"}], "beta": {"tasks": [{"id": "B"}]}}}`,
			[]string{"A alpha - A", "B beta - B"}, nil},
		{"agents.json", `{"agents": {"Agent-1": {"tasks": [{"task_id": "T1"}]}, "Agent-2": [{"task_id": "T1"}, {"task_id": "T2", "claimed_by": "Agent-4"}]}}`,
			[]string{"T1 - Agent-1 T1", "T1-2 - Agent-2 T1", "T2 - Agent-4 T2"},
			[]string{"T1: a second task with this id (task 2); kept as T1-2"}},
		{"by_agent.json", `{"Agent-3": [{"task_id": "X"}], "agent_4": {"phases": [{"name": "one", "tasks": [{"task_id": "Y"}]}]}}`,
			[]string{"X - Agent-3 X", "Y one agent_4 Y"}, nil},
		{"mixed.json", `{"tasks": [{"task_id": "Z"}], "phases": [{"name": "p", "tasks": [{"task_id": "Z"}]}]}`,
			[]string{"Z - - Z", "Z-2 p - Z"}, []string{"Z: a second task with this id (task 2); kept as Z-2"}},
	} {
		imp, err := ImportDreamOS(c.name, []byte(c.json))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		b, err := Parse(c.name, imp.Data)
		if err != nil {
			t.Fatalf("%s: the import is no board: %v\n%s", c.name, err, imp.Data)
		}
		var got []string
		for _, task := range b.Tasks {
			phase, _ := task.Extra["phase"].(string)
			got = append(got, fmt.Sprintf("%s %s %s %s", task.ID, dash(phase), dash(task.Owner), task.Title))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: tasks\n  %s\nwant\n  %s\n%s", c.name, strings.Join(got, "\n  "), strings.Join(c.want, "\n  "), imp.Data)
		}
		var warnings []string
		for _, w := range imp.Warnings {
			if strings.Contains(w, "second task") {
				warnings = append(warnings, w)
			}
		}
		if !slices.Equal(warnings, c.warnings) {
			t.Errorf("%s: warnings %q, want %q", c.name, warnings, c.warnings)
		}
		if len(imp.IDs) != len(c.want) {
			t.Errorf("%s: %d ids, want %d", c.name, len(imp.IDs), len(c.want))
		}
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
