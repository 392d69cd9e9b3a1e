package turns

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents"
	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/clock/clocktest"
	"github.com/agentctl/agentctl/mailbox"
)

// newRuntime is a runtime folder with the mailboxes of two agents and the
// default person, as agentctl init leaves it.
func newRuntime(t *testing.T) Runtime {
	t.Helper()
	cfg, err := config.Parse("agentctl.yaml", config.Initial([]string{"Agent-1", "Agent-2"}))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, name := range cfg.MailboxNames() {
		if err := mailbox.Create(root, name); err != nil {
			t.Fatal(err)
		}
	}
	return Runtime{actions.Runtime{Root: root, Config: cfg}}
}

func claimed(t *testing.T, rt Runtime, agent string) (*mailbox.Consumer, *mailbox.Claim) {
	t.Helper()
	if _, err := rt.Send(actions.Draft{To: agent, Body: "do it", Priority: "normal"}); err != nil {
		t.Fatal(err)
	}
	mb, err := mailbox.Open(rt.Root, agent)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mb.Consume(actions.ConsumerOptions(rt.Config), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cl, err := c.Claim(time.Now())
	if err != nil || cl == nil {
		t.Fatalf("claim: %v, %v", cl, err)
	}
	return c, cl
}

// With no runner up, skip settles the message itself, and retry brings it
// back to the inbox.
func TestSkipWithNoRunnerThenRetry(t *testing.T) {
	rt := newRuntime(t)
	c, cl := claimed(t, rt, "Agent-1")
	c.Close() // the runner is gone; its message stays in flight
	// Its last heartbeat says it works on the message.
	mb := mailboxOf(t, rt, "Agent-1")
	if err := mb.WriteStatus(mailbox.Status{Agent: "Agent-1", PID: 1 << 22, State: "working", Current: cl.Message.ID, UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	asked := false
	s, err := rt.Skip(context.Background(), SkipRequest{Agent: "agent-1", Reason: "stuck", OnAsk: func(Skipped) { asked = true }})
	if err != nil || s.By != SkippedHere || s.ID != cl.Message.ID || s.Agent != "Agent-1" || s.RunnerPID != 0 || asked {
		t.Fatalf("skipped %+v (asked: %v), %v; want %s settled here", s, asked, err, cl.Message.ID)
	}
	if st, err := mb.ReadStatus(); err != nil || st.State != "stopped" || st.Current != "" {
		t.Errorf("status after the skip: %+v, %v; want stopped, working on nothing", st, err)
	}
	r, err := rt.Retry(context.Background(), s.ID, "", "")
	if err != nil || r.Message.ID != s.ID || r.Mailbox.Agent != "Agent-1" || r.Was.Reason != agents.SkipReason("stuck") {
		t.Fatalf("retried %+v, %v", r, err)
	}
	if es, _ := mailboxOf(t, rt, "Agent-1").List(mailbox.StatePending); len(es) != 1 || es[0].Message.ID != s.ID {
		t.Errorf("Agent-1's inbox holds %v", es)
	}
}

// With a runner up, skip asks it and waits, on its clock, for the message
// to leave processing/; it says where the runner put it, or gives up at
// the deadline with the request withdrawn.
func TestSkipAsksTheRunner(t *testing.T) {
	rt := newRuntime(t)
	clk := clocktest.New(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	rt.Clock = clk
	c, cl := claimed(t, rt, "Agent-1")
	defer c.Close()
	mb, _ := mailbox.Open(rt.Root, "Agent-1")

	type result struct {
		s   Skipped
		err error
	}
	ask := func() (chan result, chan Skipped) {
		done, asked := make(chan result, 1), make(chan Skipped, 1)
		go func() {
			s, err := rt.Skip(context.Background(), SkipRequest{Agent: "Agent-1", Reason: "wrong task", Wait: time.Minute, OnAsk: func(a Skipped) { asked <- a }})
			done <- result{s, err}
		}()
		return done, asked
	}

	done, asked := ask()
	a := <-asked
	if a.ID != cl.Message.ID || a.RunnerPID == 0 {
		t.Fatalf("asked %+v", a)
	}
	if r, ok := mb.SkipRequested(cl.Message.ID); !ok || r.Reason != "wrong task" {
		t.Fatalf("no skip request left for the runner: %+v", r)
	}
	clk.BlockUntil(2) // the deadline and the next look
	clk.Advance(time.Minute)
	if r := <-done; r.err == nil || !strings.Contains(r.err.Error(), "did not let go") {
		t.Fatalf("skipped %+v, %v; want the deadline passed", r.s, r.err)
	}
	if _, ok := mb.SkipRequested(cl.Message.ID); ok {
		t.Error("the skip request was left behind")
	}

	done, asked = ask()
	<-asked
	if err := c.Deadletter(cl, agents.SkipReason("wrong task"), clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.BlockUntil(2) // the first ask's waiters all woke at its deadline
	clk.Advance(skipPoll)
	r := <-done
	if r.err != nil || r.s.By != SkippedByRunner || !strings.HasPrefix(r.s.File, "deadletter/") {
		t.Fatalf("skipped %+v, %v; want the runner's dead letter", r.s, r.err)
	}
}

func mailboxOf(t *testing.T, rt Runtime, agent string) *mailbox.Mailbox {
	t.Helper()
	mb, err := mailbox.Open(rt.Root, agent)
	if err != nil {
		t.Fatal(err)
	}
	return mb
}
