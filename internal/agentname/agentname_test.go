package agentname

import "testing"

func TestValid(t *testing.T) {
	for _, ok := range []string{"Agent-1", "Agent-12", "Reviewer", "captain_4", "A"} {
		if err := Valid(ok); err != nil {
			t.Errorf("Valid(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Agent 1", "../Agent-1", "Agent/1", `Agent\1`, "..", ".hidden", "-x", "1st", "Agent-1\n", "ä", string(make([]byte, 65))} {
		if Valid(bad) == nil {
			t.Errorf("Valid(%q) accepted it", bad)
		}
	}
}

func TestResolve(t *testing.T) {
	known := []string{"Agent-1", "Agent-2", "Reviewer"}
	for in, want := range map[string]string{"agent-2": "Agent-2", "AGENT-1": "Agent-1", "reviewer": "Reviewer"} {
		if got, err := Resolve(known, in); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"Agent-3", "Agent", "../Agent-1"} {
		if got, err := Resolve(known, bad); err == nil {
			t.Errorf("Resolve(%q) = %q, want an error", bad, got)
		}
	}
}
