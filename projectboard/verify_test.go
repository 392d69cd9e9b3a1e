package projectboard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpdateParsesEachBoardOnce holds a change to one parse of each board:
// the edit is checked from the changed task's text, not by parsing the
// whole board again.
func TestUpdateParsesEachBoardOnce(t *testing.T) {
	s, _ := newRoot(t, "handwritten.yaml", "shared.yaml", "crlf.yaml")
	changes := []struct {
		id     string
		change func(*Task)
	}{
		{"MB-1", func(t *Task) { t.Status, t.Notes = Done, "two\nlines" }},
		{"MB-2", func(t *Task) { t.Owner, t.DependsOn = "Agent-2", []string{"MB-1", "PB-1"} }},
		{"PB-1", func(t *Task) { t.Title, t.Priority = "Keep comments", "high" }},
		{"C-4", func(t *Task) { t.Notes = "count: 1" }},
		{"W-1", func(t *Task) { t.Status = Review }},
	}
	for _, c := range changes {
		before := parses.Load()
		if _, err := s.Update(context.Background(), c.id, func(t *Task) error { c.change(t); return nil }); err != nil {
			t.Fatal(err)
		}
		if n := parses.Load() - before; n != 3 {
			t.Errorf("changing %s parsed %d boards, want each of the 3 once", c.id, n)
		}
	}
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
