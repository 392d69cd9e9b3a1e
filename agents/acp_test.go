package agents

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// standInACP is an acp seat's driver running the stand-in agent
// (fixtures/acpagent), its conversation kept under root as agentctl run
// keeps it.
func standInACP(t *testing.T, root, agent string) cursor.Driver {
	d, _ := standInACPWithState(t, root, agent)
	return d
}

// standInACPWithState is standInACP and the stand-in's state folder.
func standInACPWithState(t *testing.T, root, agent string) (cursor.Driver, string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "acpagent")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(repoRoot(), "fixtures", "acpagent")).CombinedOutput(); err != nil {
		t.Fatalf("cannot build the stand-in ACP agent: %v\n%s", err, out)
	}
	state := t.TempDir()
	d, err := cursor.New(cursor.Settings{Name: agent, Driver: cursor.DriverACP, KeepsConversation: true,
		ACP: cursor.ACPSettings{Command: []string{bin}, Dir: t.TempDir(), Env: []string{"ACPAGENT_STATE=" + state}}},
		cursor.Options{Sessions: cursor.SessionsDir(root), Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.(interface{ Close() }).Close)
	return d, state
}

// TestACPSeatWaitsForThePersonsApproval: through a runner and the ACP
// driver, the agent's request to run a tool waits in the person's inbox;
// approved, the agent runs it and the turn ends; the next turn is in the
// same session.
func TestACPSeatWaitsForThePersonsApproval(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, standInACP(t, root, "Agent-1")))
	s.Guardrails = Guardrails{ToolPermission: GuardConfirm}
	s.Resend = false
	startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "human", To: "Agent-1", Body: "acpagent> permission:deploy"})
	req := awaitApproval(t, root, "the approval request")
	if !strings.Contains(req.Body, `run "deploy", input {"command":"deploy"}`) {
		t.Errorf("the request says:\n%s", req.Body)
	}
	settle(t, root, req.ID, true, "")
	poll.Until(t, "m1 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if rc := receiptOf(t, root, "Agent-1", "m1"); rc.Reply != "allowed" {
		t.Errorf("reply %q, want the agent's word that it was allowed", rc.Reply)
	}
	deliverTo(t, root, mailbox.Message{ID: "m2", From: "human", To: "Agent-1", Body: "acpagent> recall"})
	poll.Until(t, "m2 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 2 })
	if rc := receiptOf(t, root, "Agent-1", "m2"); !strings.Contains(rc.Reply, "acpagent> permission:deploy") {
		t.Errorf("the second turn's session recalls %q, want the first turn's prompt", rc.Reply)
	}
}

// A runner stopped on purpose during an ACP turn leaves the message to the
// next runner, which sends the prompt again (the agent had stopped it when
// asked) and archives the reply: the stop used to dead-letter it as a lost
// reply.
func TestACPTurnCutByAStopIsSentAgainByTheNextRunner(t *testing.T) {
	root := newRuntime(t, demoAgents)
	deliverTo(t, root, mailbox.Message{ID: "long", From: "Agent-2", To: "Agent-1", Body: "acpagent> hangonce:done at last"})
	d, state := standInACPWithState(t, root, "Agent-1")
	s := testSettings(root, "Agent-1", demoAgents, d)
	s.ShutdownGrace = 10 * time.Millisecond
	s.Log = logOnFailure(t)
	stop := startRunner(t, s)
	// Stopped once the agent works on the prompt: the stand-in marks a
	// hangonce it has begun.
	poll.Until(t, "the agent to work on the prompt", func() bool {
		marks, _ := filepath.Glob(filepath.Join(state, "hung-*"))
		return len(marks) == 1
	})
	stop()
	if c := counts(t, root, "Agent-1"); c.Processing != 1 || c.Dead != 0 {
		t.Fatalf("after the stop Agent-1 holds %+v; want the message in flight", c)
	}
	next := testSettings(root, "Agent-1", demoAgents, d)
	// An acp seat's resend: auto, which never sends again a prompt that
	// may have been answered, but does one stopped unanswered.
	next.Resend, next.ResendStopped = false, true
	next.Log = logOnFailure(t)
	startRunner(t, next)
	poll.Until(t, "the message to be settled", func() bool {
		c := counts(t, root, "Agent-1")
		return c.Done+c.Dead == 1
	})
	if c := counts(t, root, "Agent-1"); c.Done != 1 {
		t.Fatalf("Agent-1 holds %+v; want the message done", c)
	}
	rc := receiptOf(t, root, "Agent-1", "long")
	if rc.Reply != "done at last" || !strings.Contains(strings.Join(rc.Data.DriverNotes, "\n"), "sent again") {
		t.Errorf("receipt: reply %q, notes %q; want the reply, saying the prompt was sent again", rc.Reply, rc.Data.DriverNotes)
	}
}

// A turn that stops waiting for a person's approval (its runner stopped)
// withdraws the request: approved later, it would say a tool runs that
// nothing waits to run.
func TestAnApprovalNothingWaitsForIsWithdrawn(t *testing.T) {
	root := newRuntime(t, demoAgents)
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, standInACP(t, root, "Agent-1")))
	s.Guardrails = Guardrails{ToolPermission: GuardConfirm}
	s.ShutdownGrace = 10 * time.Millisecond
	s.Log = logOnFailure(t)
	stop := startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "human", To: "Agent-1", Body: "acpagent> permission:rm -rf build"})
	req := awaitApproval(t, root, "the approval request")
	stop()
	mb, _ := mailbox.Open(root, "human")
	found, err := mb.Locate(req.ID)
	if err != nil || len(found) != 1 || found[0].State != mailbox.StateDone || found[0].Receipt == nil || found[0].Receipt.Outcome != "withdrawn" {
		t.Fatalf("the request after the stop: %+v, %v; want it archived withdrawn", found, err)
	}
}

// The tool asked for again after its request was withdrawn (the runner
// stopped during the wait, and the next one sent the prompt again) is a
// new request, which the person answers: not refused by the withdrawn one.
func TestAToolAskedAgainAfterAWithdrawalIsAskedAnew(t *testing.T) {
	root := newRuntime(t, demoAgents)
	d := standInACP(t, root, "Agent-1")
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, d))
	s.Guardrails = Guardrails{ToolPermission: GuardConfirm}
	s.ShutdownGrace = 10 * time.Millisecond
	s.Resend, s.ResendStopped = false, true
	s.Log = logOnFailure(t)
	stop := startRunner(t, s)
	deliverTo(t, root, mailbox.Message{ID: "m1", From: "human", To: "Agent-1", Body: "acpagent> permission:deploy"})
	poll.Until(t, "the first approval request", func() bool { return len(approvals(t, root)) == 1 })
	stop()
	startRunner(t, s)
	req := awaitApproval(t, root, "a new approval request")
	settle(t, root, req.ID, true, "")
	poll.Until(t, "m1 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
	if rc := receiptOf(t, root, "Agent-1", "m1"); rc.Reply != "allowed" {
		t.Errorf("reply %q, want the agent's word that it was allowed", rc.Reply)
	}
}

// awaitApproval waits for the one approval request pending in the
// person's inbox, and returns it.
func awaitApproval(t *testing.T, root, what string) mailbox.Message {
	t.Helper()
	var req mailbox.Message
	poll.Until(t, what, func() bool {
		reqs := approvals(t, root)
		if len(reqs) == 1 {
			req = reqs[0]
		}
		return len(reqs) == 1
	})
	return req
}

// The prompt sent again is a new turn: once it is submitted, the claim no
// longer says its prompt was stopped, so a crash in the new turn never
// has it sent a third time.
func TestAPromptSentAgainLeavesNoStaleStoppedState(t *testing.T) {
	root := newRuntime(t, demoAgents)
	deliverTo(t, root, mailbox.Message{ID: "long", From: "Agent-2", To: "Agent-1", Body: "acpagent> hang"})
	d, state := standInACPWithState(t, root, "Agent-1")
	s := testSettings(root, "Agent-1", demoAgents, d)
	s.ShutdownGrace = 10 * time.Millisecond
	s.Resend, s.ResendStopped = false, true
	s.Log = logOnFailure(t)
	mb, _ := mailbox.Open(root, "Agent-1")
	turnOf := func() turnRecord {
		p, ok := readProgress(mb, "long")
		if !ok {
			return turnRecord{}
		}
		tr, _ := readTurn(p)
		return tr
	}
	stop := startRunner(t, s)
	poll.Until(t, "the agent to work on the first prompt", func() bool {
		_, err := os.Stat(filepath.Join(state, "hanging"))
		return err == nil
	})
	stop()
	if st := turnOf().ResumeState; st == "" {
		t.Fatal("the stopped turn left no resume state")
	}
	startRunner(t, s)
	poll.Until(t, "the prompt sent again to be submitted", func() bool {
		tr := turnOf()
		return strings.Contains(strings.Join(tr.DriverNotes, "\n"), "sent again") && tr.ResumeState == ""
	})
}
