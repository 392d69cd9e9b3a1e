package missioncontrol

import (
	"strings"
	"testing"

	"github.com/agentctl/agentctl/internal/clock"
)

// TestTopTellsApprovalsFromQuestions: approval requests waiting for a
// person are counted apart from questions, with the commands that settle
// them.
func TestTopTellsApprovalsFromQuestions(t *testing.T) {
	m := &Terminal{Clock: clock.System, snap: Snapshot{People: []Person{{Name: "human", Waiting: []Letter{
		{ID: "q", Type: "question"}, {ID: "a1", Type: "approval"}, {ID: "a2", Type: "approval"},
	}}}}}
	v := m.View()
	for _, want := range []string{"human: 1 message(s) wait for an answer", "human: 2 approval request(s) wait (agentctl inbox human; agentctl approve ID or deny ID)"} {
		if !strings.Contains(v, want) {
			t.Errorf("top does not say %q:\n%s", want, v)
		}
	}
}

// TestTopSaysWhatDidNotEndPlainlyDone: an agent with messages done with
// errors or without the block gets a line saying so, apart from "done";
// one without gets none.
func TestTopSaysWhatDidNotEndPlainlyDone(t *testing.T) {
	m := &Terminal{Clock: clock.System, snap: Snapshot{Agents: []Agent{
		{Name: "Agent-1", Runner: Runner{Runner: "running", State: "idle", DoneWithErrors: 1, DoneWithoutBlock: 3, NoBlockRun: 3}, Done: 9},
		{Name: "Agent-2", Runner: Runner{Runner: "running", State: "idle"}, Done: 4},
	}}}
	v := m.View()
	want := "Agent-1: 1 done with errors, 3 done without block, the last 3 replies in a row had no agentctl block (agentctl inbox Agent-1 --state done)"
	if !strings.Contains(v, want) {
		t.Errorf("top does not say %q:\n%s", want, v)
	}
	if strings.Contains(v, "Agent-2:") {
		t.Errorf("top says something of Agent-2, whose messages all ended done:\n%s", v)
	}
}

// TestTopCountsWhatTheSnapshotLeavesOut: with more dead letters and
// questions than a snapshot holds, top says how many there are in all.
func TestTopCountsWhatTheSnapshotLeavesOut(t *testing.T) {
	m := &Terminal{Clock: clock.System, snap: Snapshot{
		Agents: []Agent{{Name: "Agent-1", Dead: 70}},
		People: []Person{{Name: "human", Waiting: []Letter{{ID: "q1", Type: "question"}, {ID: "q2", Type: "question"}}, Pending: 9, Dead: 2}},
		Dead:   []Letter{{Mailbox: "Agent-1", Ref: "d1"}, {Mailbox: "human", Ref: "d2"}},
	}}
	v := m.View()
	for _, want := range []string{"DEAD LETTERS (newest 2 of 72;", "human: 2 message(s) wait for an answer", "human: 7 more wait after these (agentctl inbox human)"} {
		if !strings.Contains(v, want) {
			t.Errorf("top does not say %q:\n%s", want, v)
		}
	}
}
