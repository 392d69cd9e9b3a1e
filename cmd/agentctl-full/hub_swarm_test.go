//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentctl/agentctl/agents/hub/hubseats"
	"github.com/agentctl/agentctl/internal/testenv/poll"
	"github.com/agentctl/agentctl/mailbox"
)

// swarmConfig is the agentctl.yaml of a demo swarm over three machines:
// the hub's (hubm) with Agent-1, m2 with Agent-2 and m3 with Agent-3, each
// the demo's scripted agent.
func swarmConfig(listen string) string {
	demo, _ := filepath.Abs("../../fixtures/demo")
	cfg := "hub: {machine: hubm, listen: " + listen + "}\nagents:\n"
	for i, m := range []string{"", "m2", "m3"} {
		name := fmt.Sprintf("Agent-%d", i+1)
		if m != "" {
			m = "machine: " + m + ", "
		}
		cfg += fmt.Sprintf("  - {name: %s, %sdriver: exec, exec: {command: [sh, %s/agent.sh, %s]}}\n", name, m, demo, name)
	}
	return cfg + "people: [human]\nrate_limit: {per_minute: 0, per_hour: 0}\n"
}

// TestHubSwarmDemo is the demo across three machines: a task passes from
// Agent-1 on the hub's machine to Agent-2 on m2 and Agent-3 on m3, through
// the hub, and ends done; messages dropped into inbox folders on the other
// machines reach the hub once.
func TestHubSwarmDemo(t *testing.T) {
	t.Parallel()
	dir, root := demoRuntime(t)
	cfg := swarmConfig(freeAddr(t))
	machine(t, root, cfg)
	m2, m3 := filepath.Join(dir, "m2"), filepath.Join(dir, "m3")
	machine(t, m2, cfg)
	machine(t, m3, cfg)

	giveCredentials(t, root, m2, "m2")
	giveCredentials(t, root, m3, "m3")
	url := startHub(t, dir, "hub", root).url()
	startAgentctl(t, dir, "seat-2", m2, "run", "Agent-2", "--hub", url, "--log-format", "json")
	startAgentctl(t, dir, "seat-3", m3, "run", "Agent-3", "--hub", url, "--log-format", "json")
	startAgentctl(t, dir, "runner-1", root, "run", "Agent-1", "--log-format", "json")

	mustAgentctl(t, root, "send", "--to", "Agent-1", "--type", "task", "--task", "DEMO-1", "--subject", "start DEMO-1", "please do DEMO-1")
	poll.Until(t, "DEMO-1 to be done by Agent-3", func() bool {
		show, _, _ := agentctl(t, root, "board", "show", "DEMO-1")
		return archivedWithReceipts(t, root, "Agent-3") == 1 && strings.Contains(show, "status: done") && strings.Contains(show, "shipped in v0.1.0 by Agent-3")
	})
	for _, a := range []string{"Agent-1", "Agent-2", "Agent-3"} {
		if n := archivedWithReceipts(t, root, a); n != 1 {
			t.Errorf("%s archived %d messages at the hub, want 1", a, n)
		}
	}
	var notice []string
	poll.Until(t, "the dependency notice for human", func() bool {
		notice = nil
		mb, _ := mailbox.Open(root, "human")
		pending, _ := mb.List(mailbox.StatePending)
		for _, e := range pending {
			if e.Message.Type == "task-dependency-fulfilled" && e.Message.TaskID == "DEMO-2" {
				notice = append(notice, e.Message.ID)
			}
		}
		return len(notice) > 0
	})
	for _, want := range []struct{ agent, text string }{{"Agent-1", "Wrote greet()"}, {"Agent-2", "Reviewed DEMO-1"}, {"Agent-3", "Shipped DEMO-1 in v0.1.0."}} {
		if log := readFile(t, filepath.Join(root, "devlogs", want.agent+".md")); strings.Count("\n"+log, "\n## ") != 1 || !strings.Contains(log, want.text) {
			t.Errorf("%s's devlog at the hub:\n%s\nwant one entry, saying %q", want.agent, log, want.text)
		}
	}

	// Messages dropped on the other machines, for an agent of a third
	// machine, for the hub's own agent and for a person, reach the hub.
	// Acks take no turn: the board stays as the demo left it.
	fromM2 := strings.TrimSpace(mustAgentctl(t, m2, "send", "--to", "Agent-3", "--from", "Agent-2", "--type", "ack", "--subject", "from m2", "thanks for shipping"))
	fromM3 := strings.TrimSpace(mustAgentctl(t, m3, "send", "--to", "Agent-1", "--from", "Agent-3", "--type", "ack", "--subject", "from m3", "thanks for greet()"))
	toHuman := strings.TrimSpace(mustAgentctl(t, m3, "send", "--to", "human", "--from", "Agent-3", "--subject", "released", "v0.1.0 is out"))
	poll.Until(t, "the forwarded messages to be settled at the hub", func() bool {
		return archivedWithReceipts(t, root, "Agent-3") == 2 && archivedWithReceipts(t, root, "Agent-1") == 2 &&
			strings.Contains(strings.Join(mailboxes(t, root, "human")[mailbox.StatePending], " "), toHuman)
	})
	for _, c := range []struct{ root, agent, id string }{{root, "Agent-3", fromM2}, {root, "Agent-1", fromM3}, {root, "human", toHuman}} {
		got := mailboxes(t, c.root, c.agent)
		n := 0
		for _, ids := range got {
			n += strings.Count(" "+strings.Join(ids, " ")+" ", " "+c.id+" ")
		}
		if n != 1 {
			t.Errorf("%s is %d times in %s's mailbox at the hub: %v", c.id, n, c.agent, got)
		}
	}
	// On the machines they were dropped on, they are archived as forwarded
	// (once the server confirmed them: the hub may have them a moment
	// before).
	for _, c := range []struct{ root, agent, id string }{{m2, "Agent-3", fromM2}, {m3, "Agent-1", fromM3}, {m3, "human", toHuman}} {
		poll.Until(t, c.id+" archived on "+filepath.Base(c.root), func() bool {
			return len(mailboxes(t, c.root, c.agent)[mailbox.StateProcessing]) == 0
		})
		if got := mailboxes(t, c.root, c.agent); len(got[mailbox.StateDone]) != 1 || got[mailbox.StateDone][0] != c.id || len(got[mailbox.StatePending])+len(got[mailbox.StateProcessing])+len(got[mailbox.StateDead]) != 0 {
			t.Errorf("%s's mailbox on %s: %v, want %s archived", c.agent, filepath.Base(c.root), got, c.id)
		}
	}
	if after, _, _ := agentctl(t, root, "board", "show", "DEMO-1"); !strings.Contains(after, "status: done") {
		t.Errorf("DEMO-1 after the acks:\n%s", after)
	}
	if notices := mailboxes(t, root, "human")[mailbox.StatePending]; len(notices) != 2 {
		t.Errorf("human's inbox: %v, want the dependency notice %v and %s", notices, notice, toHuman)
	}
	poll.Until(t, "seats.json to show both seats on their machines", func() bool {
		seats, _, _ := hubseats.Read(root)
		return seats.Beats["Agent-2"].Machine == "m2" && seats.Beats["Agent-3"].Machine == "m3"
	})
	if _, err := os.Stat(filepath.Join(m2, "seats", "Agent-2")); err != nil {
		t.Errorf("m2 keeps no journal of Agent-2's turns: %v", err)
	}
}
