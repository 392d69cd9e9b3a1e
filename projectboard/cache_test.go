package projectboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// sameBoard compares a board made without a full parse with one parsed:
// same text, tasks and tree, but for comments, which a task's text alone
// may attach to other nodes and which nothing reads.
func sameBoard(got, want *Board) error {
	switch {
	case got.Path != want.Path || string(got.data) != string(want.data):
		return fmt.Errorf("path or text differ")
	case !reflect.DeepEqual(got.Tasks, want.Tasks):
		return fmt.Errorf("tasks differ:\n%+v\n%+v", got.Tasks, want.Tasks)
	case got.anchors != want.anchors || len(got.taskNodes) != len(want.taskNodes):
		return fmt.Errorf("anchors or task count differ")
	}
	if err := sameNode(got.root, want.root); err != nil {
		return err
	}
	if err := sameNode(got.tasksKey, want.tasksKey); err != nil {
		return err
	}
	if err := sameNode(got.seq, want.seq); err != nil {
		return err
	}
	for i := range got.taskNodes {
		if err := sameNode(got.taskNodes[i], want.taskNodes[i]); err != nil {
			return err
		}
	}
	return nil
}

func sameNode(got, want *yaml.Node) error {
	if (got == nil) != (want == nil) {
		return fmt.Errorf("one node is missing")
	}
	if got == nil {
		return nil
	}
	if got.Kind != want.Kind || got.Style != want.Style || got.Tag != want.Tag || got.Value != want.Value ||
		got.Anchor != want.Anchor || got.Line != want.Line || got.Column != want.Column || len(got.Content) != len(want.Content) {
		return fmt.Errorf("node %q at %d:%d differs from %q at %d:%d", got.Value, got.Line, got.Column, want.Value, want.Line, want.Column)
	}
	for i := range got.Content {
		if err := sameNode(got.Content[i], want.Content[i]); err != nil {
			return err
		}
	}
	return nil
}

// TestRereadMatchesParse reads boards again after edits of one task, as a
// person or sed makes them, and after edits that reach past one task: each
// must read exactly as a parse of the whole text does.
func TestRereadMatchesParse(t *testing.T) {
	board := "tasks:\n  - id: A\n    title: a\n    status: todo\n    notes: |+\n      text\n  - id: B\n    title: b\n    status: todo\nversion: 1\n"
	cases := map[string]struct {
		old, new string
		local    bool // read from one task's text
	}{
		"status":      {"status: todo\n  - id: B", "status: done\n  - id: B", true},
		"line added":  {"    title: b\n", "    title: b\n    owner: Agent-1\n", true},
		"line gone":   {"    title: a\n", "", false}, // task A has no title: Parse must say so
		"two tasks":   {"title: a\n    status: todo\n    notes: |+\n      text\n  - id: B\n    title: b", "title: x\n    status: todo\n    notes: |+\n      text\n  - id: B\n    title: y", false},
		"id taken":    {"id: B", "id: A", false},
		"doc end":     {"    title: b\n", "    title: b\n...\n", false},
		"joined line": {"text\n  - id: B", "text  - id: B", false},
		// Blank lines before a task's "-" belong to the "|+" block above.
		"blank above": {"      text\n", "      text\n\n\n", false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := Parse("x.yaml", []byte(board))
			if err != nil {
				t.Fatal(err)
			}
			text := []byte(strings.Replace(board, c.old, c.new, 1))
			rb := b.reread(text)
			if (rb != nil) != c.local {
				t.Fatalf("reread from one task's text: %v, want %v", rb != nil, c.local)
			}
			if rb == nil {
				return
			}
			nb, err := Parse("x.yaml", text)
			if err != nil {
				t.Fatalf("reread accepted a board that does not parse: %v", err)
			}
			if err := sameBoard(rb, nb); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestRereadOddLineBreaks reads again a board whose line breaks YAML and
// the editor count differently: it is parsed whole, never spliced by line
// numbers that do not match.
func TestRereadOddLineBreaks(t *testing.T) {
	for _, board := range []string{"#\r#\r#\r#\rtasks:\n  - id: A\n    title: a\n    status: todo\n", "#\rtasks:\n  - id: A\n    title: a\n    status: todo\n  - id: B\n    title: b\n    status: todo\n", "tasks:\n  - id: A\n    title: a\n    status: todo\n  - id: B\n    title: b\r    status: todo\n"} {
		b, err := Parse("x.yaml", []byte(board))
		if err != nil {
			t.Fatal(err)
		}
		if rb := b.reread([]byte(strings.Replace(board, "title: a", "title: x", 1))); rb != nil {
			t.Errorf("reread %q from one task's text", board)
		}
	}
}

// TestAddParsesOnce holds an added task to no parse of the board beyond the
// one that read it, and the board kept for the next change to exactly what
// a parse of the new text gives, comments after the last task included.
func TestAddParsesOnce(t *testing.T) {
	s, root := newRoot(t)
	path := filepath.Join(Dir(root), "big.yaml")
	data := append(bigBoard(50), "# kept at the end\n"...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Boards(); err != nil {
		t.Fatal(err)
	}
	before := parses.Load()
	if _, err := s.Add(context.Background(), "big.yaml", Task{ID: "N-1", Title: "new", Status: Todo, Notes: "two\nlines"}); err != nil {
		t.Fatal(err)
	}
	if n := parses.Load() - before; n != 0 {
		t.Errorf("adding a task parsed %d boards in full, want 0", n)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(path, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameBoard(keptBoard(path), want); err != nil {
		t.Error(err)
	}
	tail := "\n# kept at the end\n"
	if !strings.HasSuffix(string(out), "\n"+tail) || !strings.HasPrefix(string(out), string(data[:len(data)-len(tail)])) {
		t.Errorf("the text around the new task moved:\n%s", out)
	}
}
