package cli

import "testing"

func TestSuggestNamesOnlyAClearTypo(t *testing.T) {
	commands := commandNames()
	for word, want := range map[string]string{
		"stauts": "status", "staus": "status", "RUN": "run", "upp": "up", "dwn": "down",
		"frobnicate": "", "x": "", "sen": "send",
	} {
		if got := Suggest(word, commands); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", word, got, want)
		}
	}
	agents := []string{"Agent-1", "Agent-2", "Agent-3"}
	if got := Suggest("Agent-9", agents); got != "" {
		t.Errorf("Agent-9 is as close to every agent, got %q", got)
	}
	if got := Suggest("agnet-2", agents); got != "Agent-2" {
		t.Errorf("agnet-2: got %q", got)
	}
	flags := []string{"to", "from", "priority", "subject", "type", "task"}
	for word, want := range map[string]string{"prio": "priority", "subj": "subject", "ta": "task", "tyep": "type"} {
		if got := Suggest(word, flags); got != want {
			t.Errorf("Suggest(%q) among flags = %q, want %q (the only flag it begins)", word, got, want)
		}
	}
}

func TestUsageLinePicksTheSynopsisTyped(t *testing.T) {
	if got, want := usageLine(boardUsage, "board", "set", "T-1"), "agentctl board set ID key=value..."; got != want {
		t.Errorf("board set: %q, want %q", got, want)
	}
	if got, want := usageLine(boardUsage, "board", "nope"), "agentctl board list [--status S] [--owner A] [--json]"; got != want {
		t.Errorf("board nope: %q, want %q", got, want)
	}
	for _, c := range Commands {
		if c.Run != nil && usageLine(c.Usage, c.Name) == "" {
			t.Errorf("%s: no synopsis line in its usage", c.Name)
		}
	}
}
