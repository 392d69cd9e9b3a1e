package projectboard

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestChangesParseEachBoardOnce holds changes to one parse of each board:
// the edit is checked from the changed task's text, not by parsing the
// whole board again, and a board that changed only inside one task since it
// was last read (by this process's change or by a person's edit) is read
// from that task's text alone. The process reads the boards first, as a
// long-running one does: one that has not changes them without a parse
// (quick.go).
func TestChangesParseEachBoardOnce(t *testing.T) {
	s, root := newRoot(t, "handwritten.yaml", "shared.yaml", "crlf.yaml")
	shared := filepath.Join(Dir(root), "shared.yaml")
	before := parses.Load()
	if _, err := s.Boards(); err != nil {
		t.Fatal(err)
	}
	if n := parses.Load() - before; n != 3 {
		t.Errorf("reading the boards parsed %d in full, want 3", n)
	}
	changes := []struct {
		id     string
		change func(*Task)
		parsed int64 // boards parsed in full
		edit   func(string) string
	}{
		{"MB-1", func(t *Task) { t.Status, t.Notes = Done, "two\nlines" }, 0, nil},
		{"MB-2", func(t *Task) { t.Owner, t.DependsOn = "Agent-2", []string{"MB-1", "PB-1"} }, 0, nil},
		{"PB-1", func(t *Task) { t.Title, t.Priority = "Keep comments", "high" }, 0, nil},
		// A person changes one task of shared.yaml between two changes.
		{"C-4", func(t *Task) { t.Notes = "count: 1" }, 0, func(s string) string {
			return strings.Replace(s, "    title: Second counter\n", "    title: Second counter, renamed\n    size: s\n", 1)
		}},
		// A person changes two tasks at once: that board is parsed whole.
		{"W-1", func(t *Task) { t.Status = Review }, 1, func(s string) string {
			return strings.Replace(strings.Replace(s, "First counter", "First", 1), "Third counter", "Third", 1)
		}},
	}
	for _, c := range changes {
		if c.edit != nil {
			data, err := os.ReadFile(shared)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(shared, []byte(c.edit(string(data))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		before := parses.Load()
		if _, err := s.Update(context.Background(), c.id, func(t *Task) error { c.change(t); return nil }); err != nil {
			t.Fatal(err)
		}
		if n := parses.Load() - before; n != c.parsed {
			t.Errorf("changing %s parsed %d boards in full, want %d", c.id, n, c.parsed)
		}
	}
	tasks, err := s.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"handwritten.yaml", "shared.yaml", "crlf.yaml"} {
		want, err := Parse(filepath.Join(Dir(root), b), mustRead(t, filepath.Join(Dir(root), b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want.Tasks {
			i := slices.IndexFunc(tasks, func(t Task) bool { return t.ID == w.ID })
			if i < 0 {
				t.Errorf("task %s is missing", w.ID)
			} else if !reflect.DeepEqual(tasks[i], w) {
				t.Errorf("task %s reads as %+v, a parse says %+v", w.ID, tasks[i], w)
			}
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAnchoredTaskIsCheckedWhole changes a task that another part of the
// board refers to by an alias: the task's own text cannot show what the
// alias would read, so the whole board is checked and the change refused.
func TestAnchoredTaskIsCheckedWhole(t *testing.T) {
	s, root := newRoot(t)
	text := "tasks:\n  - &first\n    id: A-1\n    title: x\n    status: todo\n  - id: A-2\n    title: y\n    status: todo\ncopy: *first\n"
	path := filepath.Join(Dir(root), "anchored.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Update(context.Background(), "A-1", func(t *Task) error { t.Status = Done; return nil })
	if err == nil || !strings.Contains(err.Error(), "other values would change") {
		t.Fatalf("got error %v, want the change refused because other values would change", err)
	}
	if data, _ := os.ReadFile(path); string(data) != text {
		t.Errorf("the board was written:\n%s", data)
	}
}

// TestOddLineBreaksAreRefused edits a board whose lines end in a bare
// carriage return: YAML counts those lines and the editor would not, so
// the change is refused with a reason instead of landing anywhere.
func TestOddLineBreaksAreRefused(t *testing.T) {
	s, root := newRoot(t)
	text := "tasks:\r  - id: A-1\r    title: x\r    status: todo\r"
	path := filepath.Join(Dir(root), "mac.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Update(context.Background(), "A-1", func(t *Task) error { t.Status = Done; return nil })
	if err == nil || !strings.Contains(err.Error(), "line breaks agentctl does not edit") {
		t.Fatalf("got error %v, want the odd line breaks named", err)
	}
	if data := mustRead(t, path); string(data) != text {
		t.Errorf("the board was written:\n%q", data)
	}
}

// TestFullCheckWithNumberKey changes a task the whole board must be checked
// for (it has an anchor) on a board with a top-level key that is a number,
// which decodes as another kind of map.
func TestFullCheckWithNumberKey(t *testing.T) {
	s, root := newRoot(t)
	text := "tasks:\n  - &a\n    id: A-1\n    title: x\n    status: todo\n0: zero\n"
	path := filepath.Join(Dir(root), "numbers.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(context.Background(), "A-1", func(t *Task) error { t.Status = Done; return nil }); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(text, "status: todo\n", "status: done\n    updated_at: 2026-11-21T20:00:00Z\n", 1)
	if data := mustRead(t, path); string(data) != want {
		t.Errorf("board reads\n%s\nwant\n%s", data, want)
	}
}
