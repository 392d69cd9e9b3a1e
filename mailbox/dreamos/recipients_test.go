package dreamos

import (
	"slices"
	"testing"
)

// Senders and recipients as the lineage wrote them: upper case on a
// bracketed header, several agents or none in one field, every agent in
// words; priorities from an Urgency header and from a bracketed tag.
func TestRecipientsAndPrioritiesInWords(t *testing.T) {
	for _, c := range []struct {
		text, owner, from, to, priority string
	}{
		{"[A2A] AGENT-5 → Agent-1: review\n\nLook at it.\n", "", "AGENT-5", "Agent-1", Normal},
		{"[URGENT] Agent-4 → Agent-2\n\nThe build is red.\n", "", "Agent-4", "Agent-2", Urgent},
		{"**From:** Captain Agent-4\n**To:** Agent-1 and Agent-2\n**Urgency:** critical\n\nTake it.\n", "", "Agent-4", "Agent-1 and Agent-2", Urgent},
		{"From: Agent-4\nTo: the team\nUrgency: high\n\nProofread.\n", "", "Agent-4", "the team", High},
		{"**From:** Agent-4\n**To:** All Agents\n\nStand-up at ten.\n", "", "Agent-4", "all", Normal},
		{"**From:** Agent-4\n**To:** all_agents\n\nStand-up at ten.\n", "Agent-2", "Agent-4", "Agent-2", Normal},
	} {
		m, err := Decode([]byte(c.text), Source{Name: "/x/m.md", Owner: c.owner})
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if m.From != c.from || m.To != c.to || m.Priority != c.priority {
			t.Errorf("%q: from %q to %q priority %q, want %q %q %q", c.text, m.From, m.To, m.Priority, c.from, c.to, c.priority)
		}
	}
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Agent-1 and Agent-2", []string{"Agent-1", "Agent-2"}},
		{"Captain Agent-4 (AGENT 4)", []string{"Agent-4"}},
		{"agent_3, Agent-07", []string{"Agent-3", "Agent-7"}},
		{"the documentation team", nil},
	} {
		if got := AgentsNamed(c.text); !slices.Equal(got, c.want) {
			t.Errorf("AgentsNamed(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
