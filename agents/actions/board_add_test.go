package actions

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/agentctl/agentctl/projectboard"
)

// Tasks added at once without ids each get one of their own: the next
// free id is chosen under the boards' lock. It was chosen before it, so
// most of them picked the same one and were refused as already there.
func TestTasksAddedAtOnceGetIDsOfTheirOwn(t *testing.T) {
	rt := newRuntime(t)
	store := &projectboard.Store{Root: rt.Root}
	if err := store.CreateBoard(context.Background(), "board.yaml", []byte("tasks:\n  - id: T-1\n    title: Parser\n    status: todo\n")); err != nil {
		t.Fatal(err)
	}
	b := Board{Store: store, Agents: func() ([]string, error) { return rt.Config.AgentNames(), nil }}
	ids := make([]string, 12)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			task, err := b.AddTask(context.Background(), NewTask{Title: "a task"})
			if err != nil {
				t.Errorf("add %d: %v", i, err)
			}
			ids[i] = task.ID
		})
	}
	wg.Wait()
	slices.Sort(ids)
	if ids = slices.Compact(ids); len(ids) != 12 {
		t.Fatalf("the adds got ids %v; want twelve different ones", ids)
	}
	tasks, err := store.Tasks()
	if err != nil || len(tasks) != 13 {
		t.Fatalf("the board holds %d tasks, %v; want 13", len(tasks), err)
	}
}
