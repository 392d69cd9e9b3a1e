package config

import (
	"strings"
	"testing"
	"time"
)

func TestInitialConfigParsesToTheDefaults(t *testing.T) {
	cfg, err := Parse("agentctl.yaml", Initial([]string{"Agent-1", "Agent-2"}))
	if err != nil {
		t.Fatalf("the file init writes does not load: %v", err)
	}
	if got := cfg.AgentNames(); len(got) != 2 || got[1] != "Agent-2" {
		t.Errorf("agents = %v", got)
	}
	if cfg.Mailbox != Default().Mailbox {
		t.Errorf("mailbox = %+v, want the defaults %+v", cfg.Mailbox, Default().Mailbox)
	}
}

func TestParseRefusesWhatCannotWork(t *testing.T) {
	tests := map[string]string{
		"agents:\n  - name: ../etc\n":         "not a valid agent name",
		"agents:\n  - name: A\n  - name: a\n": `agent "a" is listed twice`,
		"mailbox:\n  watch: sometimes\n":      "neither events nor poll",
		"mailbox:\n  settle: soon\n":          `"soon" is not a duration`,
		"mailbox:\n  backoff: -1s\n":          "mailbox.backoff: must be a positive duration",
		"mailbox:\n  max_attempts: 0\n":       "max_attempts: must be at least 1",
		"mailbox:\n  watchh: events\n":        "field watchh not found",
		"agents: [\n":                         "agentctl.yaml",
		"gui:\n  quiet: 10ms\n":               "gui.quiet: 10ms is shorter than 80ms",
		"gui:\n  max_pause: 50ms\n":           "gui.max_pause: must be at least gui.quiet",
		"gui:\n  max_pause: 20m\n":            "gui.turn_timeout: must be longer than gui.max_pause",
	}
	for data, want := range tests {
		_, err := Parse("agentctl.yaml", []byte(data))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", data, err, want)
		}
	}
}

func TestOlderGUISettingsStillParse(t *testing.T) {
	// Files written before the busy indicator set first_change and an
	// 800ms quiet period.
	c, err := Parse("agentctl.yaml", []byte("gui:\n  quiet: 800ms\n  first_change: 2m\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.GUI.MaxPause != DefaultGUI().MaxPause || c.GUI.MaxPause.D() < SafeMaxPause {
		t.Errorf("max_pause = %s, want the default of at least %s", c.GUI.MaxPause, SafeMaxPause)
	}
}

func TestAgentLookupIgnoresCase(t *testing.T) {
	cfg, err := Parse("x", []byte("agents:\n  - name: Agent-1\n  - name: Reviewer\nmailbox:\n  settle: 250ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := cfg.Agent("reviewer")
	if err != nil || a.Name != "Reviewer" {
		t.Errorf("Agent(reviewer) = %+v, %v", a, err)
	}
	if _, err := cfg.Agent("Agent-2"); err == nil {
		t.Error("an unknown agent was found")
	}
	if cfg.Mailbox.Settle.D() != 250*time.Millisecond {
		t.Errorf("settle = %v", cfg.Mailbox.Settle)
	}
}

func TestDurationString(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Minute: "30m", time.Hour: "1h", 90 * time.Minute: "1h30m", 2 * time.Second: "2s",
		800 * time.Millisecond: "800ms", 61 * time.Second: "1m1s", 0: "0s",
	} {
		if got := Duration(d).String(); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(Duration(d).String()); err != nil || back != d {
			t.Errorf("%q does not parse back to %v", Duration(d).String(), d)
		}
	}
}
