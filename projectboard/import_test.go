package projectboard

import (
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
