package projectboard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestInvalidBoardIsNeverWritten(t *testing.T) {
	cases := map[string]struct{ text, reason string }{
		"bad-yaml":        {"tasks:\n  - id: A-1\n    title: broken: here\n    status: todo\n", "handwritten.yaml:3: not valid YAML"},
		"bad-status":      {"tasks:\n  - id: A-1\n    title: x\n    status: finished\n    owner: Agent-1\n", `handwritten.yaml:4: task "A-1": status "finished" is not one of todo, in_progress, review, blocked, done`},
		"dup-id":          {"tasks:\n  - {id: A-1, title: x, status: todo}\n  - id: A-1\n    title: y\n    status: todo\n", `handwritten.yaml:3: task id "A-1" is used twice (first on line 2)`},
		"dup-key":         {"tasks:\n  - id: A-1\n    title: x\n    status: todo\n    status: done\n", `handwritten.yaml:5: key "status" is given twice (first on line 4)`},
		"no-title":        {"tasks:\n  - id: A-1\n    status: todo\n", "handwritten.yaml:2: task has no title"},
		"dup-key-of-many": {"tasks:\n  - id: A-1\n    title: x\n    status: todo\n" + manyKeys(20) + "    k3: again\n", `handwritten.yaml:25: key "k3" is given twice (first on line 7)`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s, root := newRoot(t)
			path := filepath.Join(Dir(root), "handwritten.yaml")
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Stat(path)
			_, err := s.Update(context.Background(), "A-1", func(t *Task) error { t.Status = Done; return nil })
			if err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("got error %v, want one containing %q", err, c.reason)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line == 0 {
				t.Errorf("error %v carries no *ParseError with a line", err)
			}
			after, _ := os.Stat(path)
			data, _ := os.ReadFile(path)
			if string(data) != c.text || !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
				t.Errorf("the invalid board was touched")
			}
		})
	}
}

// TestHumanSaveBetweenReadAndReplace saves the board "from an editor" after
// the update read it and before it replaces it: the human's save must
// survive and the update must land on top of it.
func TestHumanSaveBetweenReadAndReplace(t *testing.T) {
	saveSurvivesBothWays(t, func(s *Store) { s.afterRead = saveOnceFromAnEditor() })
}

// saveSurvivesBothWays runs updateSurvivesTheSave the quick way and the
// full way, with the person's save hooked in by hook.
func saveSurvivesBothWays(t *testing.T, hook func(*Store)) {
	t.Helper()
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprint("full=", full), func(t *testing.T) {
			s, root := newRoot(t, "handwritten.yaml")
			s.full = full
			hook(s)
			updateSurvivesTheSave(t, s, filepath.Join(Dir(root), "handwritten.yaml"))
			quickTakes(t, full)
		})
	}
}

// saveOnceFromAnEditor is a store hook that saves the board once, as an
// editor does (a new file renamed over the old), bumping its version.
func saveOnceFromAnEditor() func(path string) {
	saves := 0
	return func(p string) {
		if saves > 0 {
			return
		}
		saves++
		data, _ := os.ReadFile(p)
		human := strings.Replace(string(data), "version: 2", "version: 3  # bumped by a human", 1)
		tmp := p + ".swp"
		os.WriteFile(tmp, []byte(human), 0o644)
		os.Rename(tmp, p)
	}
}

// quickTakes checks that on a new root, a change of MB-2 goes the quick
// way unless the store is held to the full way, so that a save made at the
// first attempt of the same change meets the way meant.
func quickTakes(t *testing.T, full bool) {
	t.Helper()
	s, _ := newRoot(t, "handwritten.yaml")
	s.full = full
	before := quickEdits.Load()
	if _, err := s.Update(context.Background(), "MB-2", func(t *Task) error { t.Status = Review; return nil }); err != nil {
		t.Fatal(err)
	}
	if quick := quickEdits.Load() > before; quick == full {
		t.Errorf("the change went the quick way: %v, want %v", quick, !full)
	}
}

// updateSurvivesTheSave updates MB-2 and checks that both the update and
// the editor's save are in the board.
func updateSurvivesTheSave(t *testing.T, s *Store, path string) {
	t.Helper()
	if _, err := s.Update(context.Background(), "MB-2", func(t *Task) error { t.Status = Blocked; return nil }); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "version: 3  # bumped by a human") {
		t.Errorf("the human's save was lost:\n%s", data)
	}
	b, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if task, _ := b.Task("MB-2"); task.Status != Blocked {
		t.Errorf("the agent's update was lost: %+v", task)
	}
}

func TestUpdateErrors(t *testing.T) {
	s, _ := newRoot(t, "handwritten.yaml")
	ctx := context.Background()
	if _, err := s.Update(ctx, "NOPE-1", func(*Task) error { return nil }); !errors.Is(err, ErrNoTask) {
		t.Errorf("unknown id: got %v", err)
	}
	if _, err := s.Update(ctx, "MB-1", func(t *Task) error { t.Status = "finished"; return nil }); err == nil || !strings.Contains(err.Error(), `status "finished"`) {
		t.Errorf("bad status: got %v", err)
	}
	if _, err := s.Update(ctx, "MB-1", func(t *Task) error { t.ID = "MB-9"; return nil }); err == nil {
		t.Errorf("changing the id was accepted")
	}
	if task, err := s.Update(ctx, "MB-1", func(*Task) error { return nil }); err != nil || task.UpdatedAt != "" {
		t.Errorf("a no-op update wrote updated_at: %+v, %v", task, err)
	}
}

func TestAddAndFind(t *testing.T) {
	s, root := newRoot(t, "handwritten.yaml")
	ctx := context.Background()
	id, err := s.NextID("T")
	if err != nil || id != "T-1" {
		t.Fatalf("NextID = %q, %v", id, err)
	}
	for _, board := range []string{"handwritten.yaml", "new.yaml", "new.yaml"} {
		id, _ := s.NextID("T")
		if _, err := s.Add(ctx, board, Task{ID: id, Title: "Write the: README", Status: Todo, Owner: "Agent-1", Notes: "a\nb"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"T-1", "T-2", "T-3", "MB-1"} {
		if _, err := s.Find(id); err != nil {
			t.Errorf("Find(%s): %v", id, err)
		}
	}
	task, _ := s.Find("T-3")
	if task.Board != "new.yaml" || task.Title != "Write the: README" || task.Notes != "a\nb" || task.UpdatedAt == "" {
		t.Errorf("T-3 reads back as %+v", task)
	}
	if _, err := s.Add(ctx, "new.yaml", Task{ID: "MB-1", Title: "dup", Status: Todo}); err == nil {
		t.Error("a duplicate id was added")
	}
	if _, err := s.Add(ctx, "../evil.yaml", Task{ID: "X-1", Title: "x", Status: Todo}); err == nil {
		t.Error("a board outside the folder was accepted")
	}
	// An empty board and a "tasks: []" board take new tasks too.
	for name, text := range map[string]string{"empty.yaml": "# nothing yet\n", "flow.yaml": "tasks: []  # none\n", "null.yaml": "tasks:\n"} {
		os.WriteFile(filepath.Join(Dir(root), name), []byte(text), 0o644)
		id, _ := s.NextID("T")
		if _, err := s.Add(ctx, name, Task{ID: id, Title: "t", Status: Todo}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		data, _ := os.ReadFile(filepath.Join(Dir(root), name))
		if !strings.HasPrefix(string(data), strings.SplitN(text, "tasks", 2)[0]) {
			t.Errorf("%s lost its head:\n%s", name, data)
		}
	}
}

// An id given by hand is not added while a board that may hold it cannot
// be read: it would end up on two boards.
func TestAddRefusesAnIdWhileABoardIsUnreadable(t *testing.T) {
	s, root := newRoot(t)
	ctx := context.Background()
	if _, err := s.Add(ctx, "other.yaml", Task{ID: "REL-1", Title: "release", Status: Todo}); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(Dir(root), "other.yaml")
	f, _ := os.OpenFile(other, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("  - id: BROKEN\n    title: [unclosed\n")
	f.Close()
	_, err := s.Add(ctx, "board.yaml", Task{ID: "REL-1", Title: "dup", Status: Todo})
	if err == nil || !strings.Contains(err.Error(), "other.yaml") {
		t.Fatalf("Add of REL-1 beside an invalid other.yaml = %v; want refused, naming it", err)
	}
	if _, err := os.Stat(filepath.Join(Dir(root), "board.yaml")); err == nil {
		t.Error("board.yaml was written")
	}
}

// manyKeys is n extra keys of a task, k1 to kn, one a line.
func manyKeys(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "    k%d: v\n", i)
	}
	return sb.String()
}

// TestHumanSaveBetweenCheckAndWrite saves the board "from an editor" after
// the update's last check and before its write, the moment a check alone
// cannot cover: the save must survive and the update land on top of it.
func TestHumanSaveBetweenCheckAndWrite(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux exchanges two files in one step; elsewhere the window stays as small as a rename")
	}
	saveSurvivesBothWays(t, func(s *Store) { s.beforeWrite = saveOnceFromAnEditor() })
}

// TestKnownIndex holds the look-up of known keys to their list.
func TestKnownIndex(t *testing.T) {
	for i, k := range knownKeys {
		if knownIndex(k) != i {
			t.Errorf("knownIndex(%q) = %d, want %d", k, knownIndex(k), i)
		}
	}
	if knownIndex("size") != -1 || isKnown("Status") {
		t.Error("an unknown key is known")
	}
}

// A board linked into the boards folder from elsewhere is changed where it
// lives, and stays a link.
func TestLinkedBoardIsWrittenThrough(t *testing.T) {
	s, root := newRoot(t)
	repo := filepath.Join(t.TempDir(), "board.yaml")
	if err := os.WriteFile(repo, []byte("tasks:\n  - id: T-1\n    title: x\n    status: todo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(Dir(root), "board.yaml")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(context.Background(), "T-1", func(t *Task) error { t.Status = Review; return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", fi.Mode(), err)
	}
	if data, _ := os.ReadFile(repo); !strings.Contains(string(data), "status: review") {
		t.Errorf("the linked board reads:\n%s", data)
	}
}

// A task a board holds with an id of several words, or an empty title (a
// board written by hand, or imported), still takes a change of status; a
// change that sets such values is still refused.
func TestChangeOfATaskWithOddValuesItDoesNotTouch(t *testing.T) {
	s, root := newRoot(t)
	board := "tasks:\n  - id: Fix login bug\n    title: \"\"\n    status: todo\n"
	if err := os.WriteFile(filepath.Join(Dir(root), "b.yaml"), []byte(board), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := s.Update(ctx, "Fix login bug", func(t *Task) error { t.Status = Done; return nil })
	if err != nil || got.Status != Done {
		t.Fatalf("Update = %+v, %v; want done", got, err)
	}
	if _, err := s.Update(ctx, "Fix login bug", func(t *Task) error { t.Owner = "a\nb"; return nil }); err == nil {
		t.Error("a two-line owner was written")
	}
	if _, err := s.Add(ctx, "b.yaml", Task{ID: "two words", Title: "x", Status: Todo}); err == nil {
		t.Error("a new task's id of two words was added")
	}
	if _, err := s.Add(ctx, "b.yaml", Task{ID: "X-1", Title: " ", Status: Todo}); err == nil {
		t.Error("a new task without a title was added")
	}
}

// A task on a board whose line breaks agentctl does not edit is still
// shown, as read and said to be, and two such tasks never show alike: a
// runner names the messages of the tasks it takes after their text.
func TestTaskTextOfABoardWithOddLineBreaks(t *testing.T) {
	b, err := Parse("b.yaml", []byte("tasks:\n  - id: T-1\n    title: \"one\u2028line\"\n    status: todo\n  - id: T-2\n    title: two\n    status: todo\n"))
	if err != nil {
		t.Fatal(err)
	}
	one, exact := b.TaskText("T-1")
	two, _ := b.TaskText("T-2")
	if exact || !strings.Contains(one, "id: T-1") || !strings.Contains(two, "id: T-2") || one == two {
		t.Errorf("TaskText = %q, %q (exact %v); want each task as read", one, two, exact)
	}
	if text, exact := b.TaskText("T-9"); text != "" || exact {
		t.Errorf("a task not on the board: %q, %v", text, exact)
	}
}
