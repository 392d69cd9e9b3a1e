package projectboard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportDreamOS converts every Dream.OS board sample and compares the
// YAML with a golden copy; the results must be valid boards.
func TestImportDreamOS(t *testing.T) {
	// The board samples, under the names Dream.OS gave them.
	samples := map[string]string{
		"working_tasks.json":                    "victoros__runtime__agent_comms__central_task_boards__working_tasks.json",
		"task_ready_queue.json":                 "victoros__runtime__agent_comms__central_task_boards__task_ready_queue.json",
		"REFACTOR-MAILBOX-ASYNC-001.json":       "victoros__runtime__agent_comms__central_task_boards__backlog__REFACTOR-MAILBOX-ASYNC-001.json",
		"2025-12-09_agent-4_pending_tasks.json": "victor-dreamos__agent_workspaces__swarm_cycle_planner__cycles__2025-12-09_agent-4_pending_tasks.json",
		"contracts.json":                        "victor-dreamos__agent_workspaces__contracts__contracts.json",
	}
	for name, sample := range samples {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "fixtures", "dreamos-samples", sample))
			if err != nil {
				t.Fatal(err)
			}
			imp, err := ImportDreamOS(name, data)
			if err != nil {
				t.Fatal(err)
			}
			got := string(imp.Data) + "# warnings:\n#   " + strings.Join(imp.Warnings, "\n#   ") + "\n"
			golden := filepath.Join("testdata", "import", strings.TrimSuffix(name, ".json")+".yaml")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("import differs from %s:\n%s", golden, got)
			}
			if strings.Contains(string(imp.Data), "{{") {
				t.Error("an unrendered placeholder was imported")
			}
		})
	}
	if _, err := ImportDreamOS("x.json", []byte(`{"a": 1,`)); err == nil {
		t.Error("broken JSON accepted")
	}
	if _, err := ImportDreamOS("x.json", []byte(`[{"name": "no id"}]`)); err == nil {
		t.Error("task without id accepted")
	}
}

// A board kept as YAML keeps its values as written (a date stays a date)
// and each task its fields' order; aliases and merge keys read as a YAML
// reader sees them.
func TestImportDreamOSYAMLKeepsValuesAndOrder(t *testing.T) {
	board := `cycle_id: 2025-12-09
defaults: &d
  priority: HIGH
  zone: west
tasks:
  - task_id: C-1
    name: Plan the cycle
    status: PENDING
    due: 2025-12-12
    owner_notes: kept
    <<: *d
    zone: east
`
	imp, err := ImportDreamOSYAML("cycle.yaml", []byte(board))
	if err != nil {
		t.Fatal(err)
	}
	got := string(imp.Data)
	for _, want := range []string{"cycle_id: 2025-12-09\n", "    priority: high\n", "    due: 2025-12-12\n    owner_notes: kept\n    zone: east\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the import has no %q:\n%s", want, got)
		}
	}
	_, tasks, _ := strings.Cut(got, "tasks:")
	if strings.Contains(got, "T00:00:00Z") || strings.Contains(tasks, "west") {
		t.Errorf("the import changed a value:\n%s", got)
	}
}

// Fields whose names are the board's own, the task's values taken from
// other fields, are kept aside rather than dropped, with a warning; notes
// keep their first line's indentation.
func TestImportKeepsFieldsItDidNotUse(t *testing.T) {
	imp, err := ImportDreamOS("nt.json", []byte(`[{"task_id":"A-1","id":"legacy-77","name":"Short","title":"The full title","status":"PENDING","assigned_to":"Agent-2","owner":"Agent-1","updated_at":"yesterday","notes":"\n  indented\n  code"}]`))
	if err != nil {
		t.Fatal(err)
	}
	got := string(imp.Data)
	for _, want := range []string{"id: A-1\n", "title: Short\n", "owner: Agent-2\n", "dreamos_id: legacy-77\n", "dreamos_title: The full title\n", "dreamos_owner: Agent-1\n", "dreamos_updated_at: yesterday\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the import has no %q:\n%s", want, got)
		}
	}
	if w := strings.Join(imp.Warnings, "\n"); !strings.Contains(w, "kept id as dreamos_id") {
		t.Errorf("warnings %q", w)
	}
	b, err := Parse("nt.yaml", imp.Data)
	if err != nil || len(b.Tasks) != 1 || b.Tasks[0].Notes != "  indented\n  code" {
		t.Errorf("the imported board reads %+v, %v; want the notes' indentation kept", b, err)
	}
}

// A YAML board whose aliases expand without bound is refused, not read
// until memory runs out.
func TestImportDreamOSYAMLRefusesAnAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("tasks: [*a9]\n")
	if _, err := ImportDreamOSYAML("bomb.yaml", []byte(b.String())); err == nil || !strings.Contains(err.Error(), "aliases expand") {
		t.Fatalf("an alias bomb: %v", err)
	}
}
