package agents

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// askingDriver is an acp seat's agent that asks to run a tool in every
// turn and replies with what it was told.
type askingDriver struct{ tool string }

func (d askingDriver) Run(ctx context.Context, t cursor.Turn) (string, error) {
	if t.OnPermission == nil {
		return "nobody asked", nil
	}
	v, err := t.OnPermission(ctx, cursor.PermissionRequest{ToolCall: "call_" + t.ID, Title: d.tool, Kind: "execute", Input: `{"command":"make deploy"}`})
	if err != nil {
		return "", err
	}
	if v.Allow {
		return "ran it: " + v.Reason, nil
	}
	return "did not run it: " + v.Reason, nil
}

// settle answers approval request id as `agentctl approve` or `deny` do:
// the effect's own code, then the request archived with the outcome.
func settle(t *testing.T, root, id string, approve bool, reason string) {
	t.Helper()
	mb, err := mailbox.Open(root, "human")
	if err != nil {
		t.Fatal(err)
	}
	found, err := mb.Locate(id)
	if err != nil || len(found) != 1 {
		t.Fatalf("request %s: %v, %v", id, found, err)
	}
	p, err := ParkedOf(found[0].Message)
	if err != nil {
		t.Fatal(err)
	}
	outcome, d := "denied", receipt.Data{By: "human", Reason: reason}
	if approve {
		if _, err := ApplyApproved(context.Background(), root, "human", p, nil); err != nil {
			t.Fatal(err)
		}
		outcome, d = "approved", receipt.Data{By: "human"}
	} else if n, _, err := Deny(root, found[0].Message, p, "human", reason, time.Now()); err != nil || n.ID != "" {
		t.Fatalf("deny: notice %+v, %v; want none: the turn hears it", n, err)
	}
	data, err := receipt.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := mb.Settle(found[0], mailbox.Receipt{Outcome: outcome, Data: data}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestToolPermissionsFollowTheGuardrail: allowed runs, denied is refused
// and audited, and confirm parks the request in the person's inbox while
// the turn waits for approve or deny.
func TestToolPermissionsFollowTheGuardrail(t *testing.T) {
	for _, c := range []struct {
		level, reply string
	}{
		{GuardAllow, "ran it: the agent asks to run \"deploy\" (guardrails.tool_permission: allow)"},
		{GuardDeny, "did not run it: refused: the agent asks to run \"deploy\" (guardrails.tool_permission: deny)"},
	} {
		root := newRuntime(t, demoAgents)
		s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, askingDriver{"deploy"}))
		s.Guardrails = Guardrails{ToolPermission: c.level}
		startRunner(t, s)
		deliverTo(t, root, mailbox.Message{ID: "m1", From: "human", To: "Agent-1", Body: "ship it"})
		poll.Until(t, "m1 to be archived", func() bool { return counts(t, root, "Agent-1").Done == 1 })
		if rc := receiptOf(t, root, "Agent-1", "m1"); rc.Reply != c.reply {
			t.Errorf("%s: reply %q, want %q", c.level, rc.Reply, c.reply)
		}
		if c.level == GuardDeny && !hasLine(auditOf(t, root), "m1 tool refused", `run "deploy" (execute), input {"command":"make deploy"}`) {
			t.Errorf("no audit of the refusal in %q", auditOf(t, root))
		}
	}

	root := newRuntime(t, demoAgents)
	s := withHuman(t, root, testSettings(root, "Agent-1", demoAgents, askingDriver{"deploy"}))
	s.Guardrails = Guardrails{ToolPermission: GuardConfirm}
	startRunner(t, s)
	for _, c := range []struct {
		id      string
		approve bool
		reply   string
	}{
		{"m1", true, "ran it: approved by human"},
		{"m2", false, "did not run it: denied by human: not on a friday"},
	} {
		deliverTo(t, root, mailbox.Message{ID: c.id, From: "human", To: "Agent-1", Body: "ship it"})
		var req mailbox.Message
		poll.Until(t, "the approval request of "+c.id, func() bool {
			reqs := approvals(t, root)
			if len(reqs) == 1 {
				req = reqs[0]
			}
			return len(reqs) == 1
		})
		if !strings.Contains(req.Body, "Its turn waits for your answer") || req.Subject != `approval: Agent-1 wants to run "deploy"` {
			t.Errorf("request %q: %s", req.Subject, req.Body)
		}
		if n := counts(t, root, "Agent-1"); n.Done != int(c.id[1]-'1') || n.Processing != 1 {
			t.Errorf("while the person decides: %+v; want the turn waiting in processing/", n)
		}
		settle(t, root, req.ID, c.approve, "not on a friday")
		want := int(c.id[1] - '0')
		poll.Until(t, c.id+" to be archived", func() bool { return counts(t, root, "Agent-1").Done == want })
		if rc := receiptOf(t, root, "Agent-1", c.id); rc.Reply != c.reply {
			t.Errorf("%s: reply %q, want %q", c.id, rc.Reply, c.reply)
		}
	}
	lines := auditOf(t, root)
	for _, want := range [][]string{{"m1 tool parked", `run "deploy"`}, {"m2 tool parked"}} {
		if !hasLine(lines, want...) {
			t.Errorf("no audit line with %q in:\n%s", want, strings.Join(lines, "\n"))
		}
	}
}
