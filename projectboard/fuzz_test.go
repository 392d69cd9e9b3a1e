package projectboard

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds the board loader arbitrary text. It must never panic, and
// on every board it accepts, an agent's edit must either be refused or
// produce a board that parses with the change in place (withTask verifies
// that itself, from the task's text alone when it can; the fuzzer hunts for
// texts where either check is wrong).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "fixtures", "boards", "*.yaml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Parse("fuzz.yaml", data)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		for i, task := range b.Tasks {
			task.Status, task.Owner, task.Notes = Done, "Agent-9", "line one\nline: two"
			task.UpdatedAt = "2026-11-21T20:00:00Z"
			out, err := b.withTask(i, task)
			if err != nil {
				continue
			}
			// An edit the task's own text proved sound must pass the
			// check of the whole board too.
			keys, _ := changedKeys(b.Tasks[i], task)
			if err := b.verify(out, i, task, keys, false); err != nil {
				t.Fatalf("edit passed withTask but not the check of the whole board: %v\n%s", err, out)
			}
			nb, err := Parse("fuzz.yaml", out)
			if err != nil {
				t.Fatalf("edited board does not parse: %v\n%s", err, out)
			}
			if got := nb.Tasks[i]; got.Status != Done || got.Notes != task.Notes || got.Owner != "Agent-9" {
				t.Fatalf("edit did not land: %+v\n%s", got, out)
			}
		}
		if out, err := b.withNewTask(Task{ID: "FZ-1", Title: "fuzz", Status: Todo}); err == nil {
			if _, err := Parse("fuzz.yaml", out); err != nil {
				t.Fatalf("board with a new task does not parse: %v\n%s", err, out)
			}
		}
	})
}
