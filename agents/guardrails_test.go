package agents

import (
	"strings"
	"testing"
)

func TestJudgeWeighsEveryGuardrailAndTheStrictestWins(t *testing.T) {
	g := Guardrails{Broadcast: GuardConfirm, OthersTask: GuardConfirm, CloseUnowned: GuardDeny, ManySends: GuardDeny, ManySendsOver: 5}
	tests := []struct {
		name  string
		p     proposal
		level string
		guard string
	}{
		{"one send", proposal{Agent: "Agent-1", Sends: 1}, GuardAllow, ""},
		{"broadcast", proposal{Agent: "Agent-1", Broadcast: true, Sends: 2}, GuardConfirm, guardBroadcast},
		{"broadcast past the count", proposal{Agent: "Agent-1", Broadcast: true, Sends: 2, SendsBefore: 4}, GuardDeny, guardManySends},
		{"up to the count", proposal{Agent: "Agent-1", Sends: 2, SendsBefore: 3}, GuardAllow, ""},
		{"own task", proposal{Agent: "Agent-1", Task: "T-1", Owner: "agent-1", OwnerKnown: true, Closes: true}, GuardAllow, ""},
		{"another's task", proposal{Agent: "Agent-1", Task: "T-1", Owner: "Agent-2", OwnerKnown: true}, GuardConfirm, guardOthersTask},
		{"closing another's task", proposal{Agent: "Agent-1", Task: "T-1", Owner: "Agent-2", OwnerKnown: true, Closes: true}, GuardDeny, guardCloseUnowned},
		{"an unowned task", proposal{Agent: "Agent-1", Task: "T-1", OwnerKnown: true}, GuardAllow, ""},
		{"closing an unowned task", proposal{Agent: "Agent-1", Task: "T-1", OwnerKnown: true, Closes: true}, GuardDeny, guardCloseUnowned},
		{"an unreadable owner", proposal{Agent: "Agent-1", Task: "T-1"}, GuardConfirm, guardOthersTask},
	}
	for _, tt := range tests {
		v := g.judge(tt.p)
		if v.Level != tt.level || v.Guard != tt.guard || (v.Level != GuardAllow && !strings.Contains(v.Reason, "guardrails."+tt.guard)) {
			t.Errorf("%s: %+v, want %s by %q", tt.name, v, tt.level, tt.guard)
		}
	}
	if v := (Guardrails{}).judge(proposal{Agent: "Agent-1", Broadcast: true, Sends: 50, Task: "T", Closes: true}); v.Level != GuardAllow {
		t.Errorf("no guardrails configured: %+v, want allow", v)
	}
}
