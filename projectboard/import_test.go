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
	files, _ := filepath.Glob(filepath.Join("..", "fixtures", "boards", "dreamos", "*.json"))
	if len(files) < 5 {
		t.Fatalf("found %d samples", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			data, _ := os.ReadFile(f)
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
