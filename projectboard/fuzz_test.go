package projectboard

import (
	"os"
	"path/filepath"
	"slices"
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
			out, next, err := b.withTask(i, task)
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
			if next != nil {
				if nx := next(); nx != nil {
					if err := sameBoard(nx, nb); err != nil {
						t.Fatalf("the board made from the task's text differs from a parse: %v\n%s", err, out)
					}
				}
			}
			if rb := b.reread(out); rb != nil {
				if err := sameBoard(rb, nb); err != nil {
					t.Fatalf("the board reread from the task's text differs from a parse: %v\n%s", err, out)
				}
			}
		}
		if out, next, err := b.withNewTask(Task{ID: "FZ-1", Title: "fuzz", Status: Todo}); err == nil {
			nb, err := Parse("fuzz.yaml", out)
			if err != nil {
				t.Fatalf("board with a new task does not parse: %v\n%s", err, out)
			}
			if next != nil {
				if err := sameBoard(next(), nb); err != nil {
					t.Fatalf("the board shown from the new task's text differs from a parse: %v\n%s", err, out)
				}
			}
		}
	})
}

// FuzzReread changes one stretch of a board's text, as a person or sed
// would, and reads it again from the board before: whenever that is done
// from one task's text, the result must be exactly what a parse of the
// whole new text gives.
func FuzzReread(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "fixtures", "boards", "*.yaml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint(len(data)/2), uint(3), []byte("x: 1\n---\n"))
		f.Add(data, uint(len(data)/3), uint(0), []byte("    extra: [a, b]\n"))
	}
	f.Add(bigBoard(3), uint(40), uint(4), []byte("done"))
	f.Add([]byte("#\r#\rtasks:\n  - id: A\n    title: a\n    status: todo\n"), uint(30), uint(1), []byte("b"))
	f.Fuzz(func(t *testing.T, data []byte, at, cut uint, insert []byte) {
		b, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		at = at % uint(len(data)+1)
		cut = min(cut, uint(len(data))-at)
		text := slices.Concat(data[:at], insert, data[at+cut:])
		rb := b.reread(text)
		if rb == nil {
			return
		}
		nb, err := Parse("fuzz.yaml", text)
		if err != nil {
			t.Fatalf("reread accepted a board that does not parse: %v\n%s", err, text)
		}
		if err := sameBoard(rb, nb); err != nil {
			t.Fatalf("reread differs from a parse: %v\n%s", err, text)
		}
	})
}
