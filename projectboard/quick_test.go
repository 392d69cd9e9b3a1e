package projectboard

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A quick change (quick.go) must be exactly the change the full way makes:
// the same file, byte for byte, the same task returned, the same error.
// These tests make each change twice, in two runtime folders holding the
// same board, one Store free to go the quick way and one held to the full
// way, and compare.

// quickOp is one change: an update of the task with id, or an add.
type quickOp struct {
	id     string
	add    bool
	change func(*Task)
}

// bothWays makes op on data both ways and fails on any difference. It
// reports whether the change was written, and whether the quick way wrote
// it.
func bothWays(t *testing.T, data []byte, op quickOp) (written, wrote bool) {
	t.Helper()
	type result struct {
		task Task
		err  string // with the folder's name left out
		out  []byte
		next string // NextID before the change
	}
	run := func(full bool) result {
		s, root := newRoot(t)
		s.full = full
		path := filepath.Join(Dir(root), "board.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var r result
		var err error
		r.next, err = s.NextID("T")
		r.next += fmt.Sprint(err != nil)
		if op.add {
			r.task, err = s.Add(context.Background(), "board.yaml", Task{ID: op.id, Title: "new task", Status: Todo, Owner: "Agent-1"})
		} else {
			r.task, err = s.Update(context.Background(), op.id, func(t *Task) error { op.change(t); return nil })
		}
		if err != nil {
			r.err = strings.ReplaceAll(err.Error(), root, "ROOT")
		}
		out, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r.out = out
		return r
	}
	before := quickEdits.Load()
	quick := run(false)
	wrote = quickEdits.Load() > before
	full := run(true)
	if quickEdits.Load()-before > 1 {
		t.Fatal("the Store held to the full way went the quick way")
	}
	if quick.next != full.next {
		t.Fatalf("quick way: next id %s, full way %s\n%s", quick.next, full.next, data)
	}
	if quick.err != full.err {
		t.Fatalf("quick way: error %v, full way: error %v\n%s", quick.err, full.err, data)
	}
	if string(quick.out) != string(full.out) {
		t.Fatalf("quick way wrote\n%s\nfull way wrote\n%s", quick.out, full.out)
	}
	if !reflect.DeepEqual(quick.task, full.task) {
		t.Fatalf("quick way returned %+v, full way %+v", quick.task, full.task)
	}
	if wrote {
		nb, err := Parse("board.yaml", quick.out)
		if err != nil {
			t.Fatalf("quick way wrote a board that does not parse: %v\n%s", err, quick.out)
		}
		if got, ok := nb.Task(op.id); !ok || (op.add != (got.Line > 0 && got.Title == "new task")) {
			t.Fatalf("quick way's change did not land: %+v\n%s", got, quick.out)
		}
	}
	return string(full.out) != string(data), wrote
}

// changes are the edits the tests make, one per key agentctl writes.
var changes = []func(*Task){
	func(t *Task) { t.Status = Done },
	func(t *Task) { t.Status, t.Owner = InProgress, "Agent-3" },
	func(t *Task) { t.Owner = "" },
	func(t *Task) { t.Title = "renamed: with a colon # and a hash" },
	func(t *Task) { t.Priority = "2" },
	func(t *Task) { t.Notes = "first line\n  indented\n\nafter a blank line\n" },
	func(t *Task) { t.Notes = "one line" },
	func(t *Task) { t.Notes = "" },
	func(t *Task) { t.DependsOn = []string{"A-1", "B 2"} },
	func(t *Task) { t.DependsOn = nil },
	func(t *Task) { t.Title = "" }, // refused
	func(t *Task) {},               // nothing to write
}

// genBoard writes a random board in the ways people and tools write them:
// comments everywhere, blank lines, every quoting and block style, extra
// keys, keys before and after the tasks list, several indentations, CRLF
// line ends, and now and then a mistake (a duplicate id, a bad status).
func genBoard(rng *rand.Rand) (data []byte, ids []string) {
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	var sb strings.Builder
	sb.WriteString(pick("", "# a board\n", "# a board\n\n", "project: demo\n", "meta:\n  owner: ops\n  tags: [a, b]\n"))
	sb.WriteString(pick("tasks:\n", "tasks:   # the work\n", "\"tasks\":\n"))
	dash := strings.Repeat(" ", rng.Intn(3)*2)
	n := 1 + rng.Intn(6)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("T-%d", i+1)
		if rng.Intn(30) == 0 && i > 0 {
			id = ids[0] // used twice
		}
		ids = append(ids, id)
		pad := dash + "  "
		keys := []string{
			"title: " + pick("Plain title", `"Quoted title"`, "'Single ''quoted'''", "Title # with a comment", `"Esc\tape"`),
			"status: " + pick("todo", "in_progress", "review", "blocked", "done", `"todo"`, "todo   # why", pick("todo", "todo", "later")),
			"owner: " + pick(`""`, "Agent-1", "", "~", "'Agent-2'"),
		}
		if rng.Intn(2) == 0 {
			keys = append(keys, "priority: "+pick("high", "1", `"2"`, "low # for now"))
		}
		if rng.Intn(2) == 0 {
			keys = append(keys, "depends_on: "+pick("[T-1]", "[]", "[T-1, \"T-2\"]", "\n"+pad+"  - T-1\n"+pad+"  - T-2", "\n"+pad+"- T-3"))
		}
		if rng.Intn(2) == 0 {
			keys = append(keys, "notes: "+pick(
				"|\n"+pad+"  line one\n"+pad+"  line two",
				"|-\n"+pad+"  kept\n\n"+pad+"  after blank",
				"|+\n"+pad+"  keep trailing\n",
				">\n"+pad+"  folded\n"+pad+"  text",
				"plain note",
				`"quoted\nnote"`,
			))
		}
		if rng.Intn(3) == 0 {
			keys = append(keys, pick("size: s", "tags: [x, y]", "meta: {a: 1}", "extra:\n"+pad+"  a: 1\n"+pad+"  b: [c]", "when: 2026-01-02", "count: 3"))
		}
		if rng.Intn(3) == 0 {
			keys = append(keys, "updated_at: 2026-11-20T10:00:00Z")
		}
		rng.Shuffle(len(keys), func(a, b int) { keys[a], keys[b] = keys[b], keys[a] })
		idLine := "id: " + pick(id, `"`+id+`"`, id+"   # task")
		keys = append([]string{idLine}, keys...)
		for k, key := range keys {
			if k == 0 {
				sb.WriteString(dash + "- " + key + "\n")
			} else {
				sb.WriteString(pad + key + "\n")
			}
			if rng.Intn(8) == 0 {
				sb.WriteString(pick(pad+"# a comment\n", "\n", dash+"# out-dented comment\n", "# at column one\n"))
			}
		}
		sb.WriteString(pick("", "\n", "\n\n", "  # between\n"))
	}
	sb.WriteString(pick("", "", "# the end\n", "archive: []\n", "done: 3\n", "\n\n"))
	text := sb.String()
	if rng.Intn(4) == 0 {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if rng.Intn(6) == 0 {
		text = strings.TrimRight(text, "\r\n")
	}
	return []byte(text), ids
}

// TestQuickSameAsFull holds quick changes to the full way on random boards,
// on the boards of the fixtures and on the Dream.OS samples as imported,
// and checks that the quick way is taken where it should be.
func TestQuickSameAsFull(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	quick, total := 0, 0
	count := func(written, wrote bool) {
		if written {
			total++
		}
		if wrote {
			quick++
		}
	}
	for i := 0; i < 150; i++ {
		data, ids := genBoard(rng)
		id := ids[rng.Intn(len(ids))]
		if rng.Intn(10) == 0 {
			id = "NOPE-1"
		}
		count(bothWays(t, data, quickOp{id: id, change: changes[rng.Intn(len(changes))]}))
		newID := "N-1"
		if rng.Intn(10) == 0 {
			newID = ids[0]
		}
		count(bothWays(t, data, quickOp{id: newID, add: true}))
	}
	var files []string
	for _, glob := range []string{"../fixtures/boards/*.yaml", "testdata/golden/*.yaml", "testdata/import/*.yaml", "../fixtures/dreamos-samples/*.yaml"} {
		fs, _ := filepath.Glob(glob)
		files = append(files, fs...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d sample boards", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Parse(f, data)
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatal(err)
		}
		var ids []string
		if b != nil {
			for _, task := range b.Tasks {
				ids = append(ids, task.ID)
			}
		}
		if len(ids) > 3 {
			ids = []string{ids[0], ids[len(ids)/2], ids[len(ids)-1]}
		}
		for k, id := range append(ids, "NOPE-1") {
			for c := k % 2; c < len(changes); c += 2 {
				count(bothWays(t, data, quickOp{id: id, change: changes[c]}))
			}
		}
		count(bothWays(t, data, quickOp{id: "N-1", add: true}))
	}
	// Most of these changes are ones the quick way can make; if it made
	// few, it is declining what it should take.
	if quick*10 < total*6 {
		t.Errorf("the quick way wrote %d of %d changes", quick, total)
	}
	t.Logf("the quick way wrote %d of %d changes", quick, total)
}

// FuzzQuickSameAsFull is TestQuickSameAsFull on any text.
func FuzzQuickSameAsFull(f *testing.F) {
	for _, glob := range []string{"../fixtures/boards/*.yaml", "testdata/import/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data, uint8(0), uint8(0))
		}
	}
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 20; i++ {
		data, _ := genBoard(rng)
		f.Add(data, uint8(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, which, change uint8) {
		b, err := Parse("fuzz.yaml", data)
		id := "T-1"
		if err == nil && len(b.Tasks) > 0 {
			id = b.Tasks[int(which)%len(b.Tasks)].ID
		}
		if change%8 == 7 {
			bothWays(t, data, quickOp{id: "N-1", add: true})
			return
		}
		bothWays(t, data, quickOp{id: id, change: changes[int(change)%len(changes)]})
	})
}
