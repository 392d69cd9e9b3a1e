package migrate

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// stopAfter is a stop asked for (Ctrl+C) after n looks at the context.
type stopAfter struct {
	context.Context
	n *int
}

func (c stopAfter) Err() error {
	if *c.n--; *c.n < 0 {
		return context.Canceled
	}
	return nil
}

// A stop asked for during the run ends it between two files, at once; a
// run again then does the rest, and the runtime ends as one uninterrupted
// run leaves it: nothing lost, nothing twice. A stop during the listing
// or the planning ends them with the stop.
func TestMigrateStopsBetweenFilesAndARunAgainFinishes(t *testing.T) {
	tree := buildTree(t)
	whole := t.TempDir()
	run(t, tree, whole, fiveAgents(t, whole))

	root := t.TempDir()
	cfg := fiveAgents(t, root)
	p := plan(t, tree, root, cfg)
	n := len(p.Files) / 2
	if err := Execute(stopAfter{context.Background(), &n}, root, cfg, p, time.Now()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Execute stopped halfway = %v, want context.Canceled", err)
	}
	if got, want := files(t, root), files(t, whole); len(got) >= len(want) {
		t.Fatalf("a run stopped halfway wrote %d files, want fewer than the %d of a whole run", len(got), len(want))
	}
	run(t, tree, root, cfg)
	if got, want := files(t, root), files(t, whole); !slices.Equal(got, want) {
		t.Errorf("stopped, then run again, the runtime holds\n%q\nwhere a whole run leaves\n%q", got, want)
	}

	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := List(stopped, tree, root); !errors.Is(err, context.Canceled) {
		t.Errorf("List after a stop = %v", err)
	}
	if _, err := New(stopped, tree, []string{"a.json"}, cfg, root, time.Now(), 0); !errors.Is(err, context.Canceled) {
		t.Errorf("New after a stop = %v", err)
	}
}

// files lists the runtime's files, by path relative to it.
func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
