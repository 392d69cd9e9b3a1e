package projectboard

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixedClock makes updated_at predictable.
var fixedClock = clock.Fixed(time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC))

// newRoot makes a runtime root whose boards folder holds copies of the
// given fixtures/boards files.
func newRoot(t testing.TB, fixtures ...string) (*Store, string) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{Dir(root), filepath.Join(root, "locks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range fixtures {
		data, err := os.ReadFile(filepath.Join("..", "fixtures", "boards", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(Dir(root), f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &Store{Root: root, Clock: fixedClock, LockWait: 10 * time.Second}, root
}

// TestGoldenEdits changes tasks of hand-formatted boards and compares the
// whole file with a golden copy: only the changed values' lines may differ.
func TestGoldenEdits(t *testing.T) {
	cases := []struct {
		name, board, id string
		change          func(*Task)
	}{
		{"mb1-done", "handwritten.yaml", "MB-1", func(t *Task) { t.Status, t.Owner = Done, "Agent-3" }},
		{"mb1-notes-title", "handwritten.yaml", "MB-1", func(t *Task) {
			t.Notes = "Rewritten by Agent-3.\nSecond line.\n"
			t.Title = `Say "lossless"`
		}},
		{"mb2-claim", "handwritten.yaml", "MB-2", func(t *Task) {
			t.Owner, t.Status = "Agent-2", InProgress
			t.DependsOn = []string{"MB-1", "MB-3"}
			t.Notes = "claimed: 2 steps left\nsee devlog"
		}},
		{"pb1-edit", "handwritten.yaml", "PB-1", func(t *Task) {
			t.Title, t.Notes, t.Priority = "Keep comments", "it's done", "high"
			t.Status = Done
		}},
		{"crlf-done", "crlf.yaml", "W-1", func(t *Task) { t.Status, t.Notes = Done, "two\nlines" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, root := newRoot(t, c.board)
			if _, err := s.Update(context.Background(), c.id, func(t *Task) error { c.change(t); return nil }); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(Dir(root), c.board))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", c.name+".yaml")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("board after the change differs from %s:\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}
