package agents

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// TestDependencyNoticeExactlyOnce: when a task becomes done, the owner of
// each task that depends on it gets one notice, though three runners and
// reconcile all notice the transition at once.
func TestDependencyNoticeExactlyOnce(t *testing.T) {
	root := newRuntime(t, demoAgents)
	writeBoard(t, root, "deps.yaml", `tasks:
  - id: D-1
    title: the parser
    status: in_progress
    owner: Agent-1
  - id: D-2
    title: docs for the parser
    status: todo
    owner: Agent-2
    depends_on: [D-1]
  - id: D-3
    title: release
    status: blocked
    owner: Agent-3
    depends_on: [D-1, D-2]
  - id: D-4
    title: already done
    status: done
    owner: Agent-3
    depends_on: [D-1]
  - id: D-5
    title: nobody's yet
    status: todo
    owner:
    depends_on: [D-1]
`)
	var turns atomic.Int32
	for _, a := range demoAgents {
		s := testSettings(root, a, demoAgents, replyDriver(func(string) (string, error) {
			turns.Add(1)
			if a == "Agent-1" {
				return block(`{"board": [{"id": "D-1", "status": "done"}]}`), nil
			}
			return "noted", nil
		}))
		s.BoardLook = time.Millisecond
		startRunner(t, s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var looks [4]atomic.Int64         // each looker's count of looks
	for i := 0; i < len(looks); i++ { // reconcile, several times over
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := &Recovery{Root: root, Agents: demoAgents, Log: testLog()}
			for ctx.Err() == nil {
				if _, err := rc.Dependencies(time.Now()); err != nil {
					t.Error(err)
				}
				looks[i].Add(1)
			}
		}()
	}
	deliverTo(t, root, mailbox.Message{ID: "finish", From: "human", To: "Agent-1", Type: "task", TaskID: "D-1", Body: "finish the parser"})
	poll.Until(t, "both notices worked", func() bool {
		return counts(t, root, "Agent-2").Done == 1 && counts(t, root, "Agent-3").Done == 1
	})
	// Every looker sees the done task a few more times.
	var seen [4]int64
	for i := range looks {
		seen[i] = looks[i].Load()
	}
	poll.Until(t, "more looks at the done task", func() bool {
		for i := range looks {
			if looks[i].Load() < seen[i]+3 {
				return false
			}
		}
		return true
	})
	cancel()
	wg.Wait()
	for agent, dependent := range map[string]string{"Agent-2": "D-2", "Agent-3": "D-3"} {
		mb, _ := mailbox.Open(root, agent)
		done, err := mb.List(mailbox.StateDone)
		if err != nil {
			t.Fatal(err)
		}
		if c := counts(t, root, agent); len(done) != 1 || c.Pending != 0 || c.Dead != 0 {
			t.Fatalf("%s: %+v, %d archived; want exactly one notice", agent, c, len(done))
		}
		m := done[0].Message
		if m.Type != TypeDependencyFulfilled || m.TaskID != dependent || m.ID != derivedID("dependency-fulfilled", "D-1", dependent) {
			t.Errorf("%s got %+v, want the notice that D-1 is done for %s", agent, m, dependent)
		}
	}
	if c := counts(t, root, "Agent-1"); c.Done != 1 || c.Pending != 0 {
		t.Errorf("Agent-1: %+v, want only its task", c)
	}
	rc := &Recovery{Root: root, Agents: demoAgents, Log: testLog()}
	if found, err := rc.Dependencies(time.Now()); err != nil || len(found) != 0 {
		t.Errorf("reconcile afterwards: %v %v, want nothing new", found, err)
	}
}
