package missioncontrol

import (
	"strings"
	"testing"
	"time"
)

// TestTopTellsApprovalsFromQuestions: approval requests waiting for a
// person are counted apart from questions, with the commands that settle
// them.
func TestTopTellsApprovalsFromQuestions(t *testing.T) {
	m := &Terminal{Now: time.Now, snap: Snapshot{People: []Person{{Name: "human", Waiting: []Letter{
		{ID: "q", Type: "question"}, {ID: "a1", Type: "approval"}, {ID: "a2", Type: "approval"},
	}}}}}
	v := m.View()
	for _, want := range []string{"human: 1 message(s) wait for an answer", "human: 2 approval request(s) wait (agentctl inbox human; agentctl approve ID or deny ID)"} {
		if !strings.Contains(v, want) {
			t.Errorf("top does not say %q:\n%s", want, v)
		}
	}
}
