package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/internal/testenv/syncbuf"
	"github.com/agentctl/agentctl/mailbox"
)

// approvalsOf lists the approval requests waiting in human's inbox.
func approvalsOf(t *testing.T, root string) []mailbox.Message {
	t.Helper()
	mb, err := mailbox.Open(root, "human")
	if err != nil {
		t.Fatal(err)
	}
	pending, _ := mb.List(mailbox.StatePending)
	var out []mailbox.Message
	for _, e := range pending {
		if e.Message.Type == "approval" {
			out = append(out, e.Message)
		}
	}
	return out
}

// TestACPSeatThroughTheCommands: agentctl run with driver acp (the
// stand-in agent of fixtures/acpagent) parks the agent's tool requests as
// guardrails.tool_permission says; agentctl approve lets the tool run and
// agentctl deny refuses it, each while the turn waits; agentctl skip
// cancels a turn the agent works on.
func TestACPSeatThroughTheCommands(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "acpagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../../fixtures/acpagent").CombinedOutput(); err != nil {
		t.Fatalf("cannot build the stand-in ACP agent: %v\n%s", err, out)
	}
	root := filepath.Join(dir, "runtime")
	work, state := filepath.Join(dir, "work"), filepath.Join(dir, "state")
	for _, d := range []string{root, work, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "agents:\n" +
		"  - {name: Agent-1, driver: acp, acp: {command: [" + bin + "]}, cwd: " + work + ", env: {ACPAGENT_STATE: " + state + "}}\n" +
		"  - {name: Agent-2}\n" +
		"people: [human]\nrate_limit: {per_minute: 0, per_hour: 0}\nguardrails: {tool_permission: confirm}\n"
	if err := os.WriteFile(filepath.Join(root, "agentctl.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	mustAgentctl(t, root, "init")

	runner := exec.Command("agentctl", "--root", root, "run", "Agent-1", "--log-format", "json")
	var runnerLog syncbuf.Buffer
	runner.Stderr = &runnerLog
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		runner.Process.Signal(syscall.SIGINT)
		runner.Wait()
		if t.Failed() {
			t.Logf("runner log:\n%s", runnerLog.String())
		}
	}()
	mb, err := mailbox.Open(root, "Agent-1")
	if err != nil {
		t.Fatal(err)
	}
	receiptOf := func(id string) *mailbox.Receipt {
		done, _ := mb.List(mailbox.StateDone)
		for _, e := range done {
			if e.Message.ID == id {
				return e.Receipt
			}
		}
		return nil
	}
	for _, c := range []struct {
		verb, reply string
	}{{"approve", "allowed"}, {"deny", "rejected"}} {
		id := strings.TrimSpace(mustAgentctl(t, root, "send", "--to", "Agent-1", "--from", "human", "acpagent> permission:deploy-"+c.verb))
		var reqs []mailbox.Message
		poll.Until(t, "the approval request", func() bool { reqs = approvalsOf(t, root); return len(reqs) == 1 })
		if !strings.Contains(reqs[0].Body, `run "deploy-`+c.verb+`"`) {
			t.Errorf("the request says:\n%s", reqs[0].Body)
		}
		if receiptOf(id) != nil {
			t.Fatalf("%s was archived before the person answered", id)
		}
		args := []string{c.verb, reqs[0].ID}
		if c.verb == "deny" {
			args = append(args, "--reason", "not today")
		}
		out := mustAgentctl(t, root, args...)
		t.Logf("agentctl %s: %s", c.verb, out)
		poll.Until(t, id+" to be archived", func() bool { return receiptOf(id) != nil })
		if rc := receiptOf(id); rc.Reply != c.reply {
			t.Errorf("%s: the agent said %q, want %q", c.verb, rc.Reply, c.reply)
		}
	}
	if n, _ := mb.List(mailbox.StatePending); len(n) != 0 {
		t.Errorf("the denial sent the agent a notice: %v", n)
	}

	id := strings.TrimSpace(mustAgentctl(t, root, "send", "--to", "Agent-1", "--from", "human", "acpagent> hang"))
	poll.Until(t, "the turn to start", func() bool { return strings.Contains(runnerLog.String(), `"id":"`+id+`","event":"submitted"`) })
	mustAgentctl(t, root, "skip", "Agent-1", "--reason", "stuck")
	poll.Until(t, id+" to be dead-lettered", func() bool {
		dead, _ := mb.List(mailbox.StateDead)
		return len(dead) == 1 && dead[0].Message.ID == id && dead[0].Reason == "skipped by a person: stuck"
	})
	// The session goes on after the cancel.
	id = strings.TrimSpace(mustAgentctl(t, root, "send", "--to", "Agent-1", "--from", "human", "acpagent> recall"))
	poll.Until(t, id+" to be archived", func() bool { return receiptOf(id) != nil })
	if rc := receiptOf(id); !strings.Contains(rc.Reply, "permission:deploy-approve") || !strings.Contains(rc.Reply, "acpagent> hang") {
		t.Errorf("after the skip the agent recalls %q, want the session's earlier prompts", rc.Reply)
	}
}
