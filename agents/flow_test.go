package agents

import (
	"strings"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// demoTask is the message that starts the demo's work.
func demoTask() mailbox.Message {
	return mailbox.Message{ID: "msg_demo_task", From: "human", To: "Agent-1", Type: "task", Priority: mailbox.High,
		Subject: "DEMO-1: add a greeting", Body: "Add a greet(name) function to the CLI, with a test.", TaskID: "DEMO-1"}
}

// checkDemoOutcome checks what the demo's work must leave behind: every
// agent archived one message, the board moved to done, each devlog tells
// its part, and nothing was dead-lettered.
func checkDemoOutcome(t *testing.T, root string) {
	t.Helper()
	for _, a := range demoAgents {
		c := counts(t, root, a)
		if c.Done != 1 || c.Dead != 0 || c.Pending != 0 || c.Processing != 0 {
			t.Errorf("%s: counts %+v, want exactly one archived message", a, c)
		}
		es := devlogOf(t, root, a)
		if len(es) != 1 || es[0].Outcome != "done" {
			t.Fatalf("%s: devlog %+v, want one done entry", a, es)
		}
	}
	tk := task(t, root, "DEMO-1")
	if tk.Status != "done" || tk.Owner != "Agent-3" || tk.Notes != "shipped in v0.1.0 by Agent-3" {
		t.Errorf("DEMO-1 = %+v, want done, owned by Agent-3, with Agent-3's notes", tk)
	}
	mb, _ := mailbox.Open(root, "Agent-3")
	done, err := mb.List(mailbox.StateDone)
	if err != nil || len(done) != 1 {
		t.Fatalf("Agent-3 archive: %v %v", done, err)
	}
	m := done[0].Message
	if m.From != "Agent-2" || m.TaskID != "DEMO-1" || m.Subject != "ship DEMO-1" || m.ThreadID != "msg_demo_task" {
		t.Errorf("Agent-3 got %+v, want Agent-2's hand-off in the task's thread", m)
	}
	a1 := devlogOf(t, root, "Agent-1")[0]
	if !strings.Contains(a1.Note, "Wrote greet()") || !strings.Contains(a1.Note, "Commit Message: feat: greet the user by name") {
		t.Errorf("Agent-1's devlog note %q lacks the block's devlog and the report", a1.Note)
	}
}

// TestExecFlow runs the demo's work with three runners and the exec
// driver: a task travels Agent-1 → Agent-2 → Agent-3 through reply blocks.
func TestExecFlow(t *testing.T) {
	root := newRuntime(t, demoAgents)
	for _, a := range demoAgents {
		startRunner(t, testSettings(root, a, demoAgents, demoExecDriver(t, a)))
	}
	deliverTo(t, root, demoTask())
	poll.Until(t, "the task to reach Agent-3's archive", func() bool { return counts(t, root, "Agent-3").Done == 1 })
	checkDemoOutcome(t, root)
}
