package config

import (
	"fmt"
	"slices"
	"strings"
)

// DriverACP talks to an agent through the Agent Client Protocol: JSON-RPC
// over the stdio of one long-lived child process per seat, one session per
// agent, one prompt per turn.
const DriverACP = "acp"

// ACP names the program a seat speaks the Agent Client Protocol with:
// a preset, or a command of its own.
type ACP struct {
	// Preset names an agent whose ACP command agentctl knows: claude,
	// codex, gemini or cursor.
	Preset string `yaml:"preset,omitempty"`
	// Command is the program and its arguments, for an agent no preset
	// names; it wins over the preset's.
	Command []string `yaml:"command,omitempty"`
	// Timeout ends a turn (the agent is asked to cancel it); 0: 10m.
	Timeout Duration `yaml:"timeout,omitempty"`
}

// ACP presets, by the command that speaks the protocol.
const (
	ACPClaude = "claude" // claude-agent-acp (npm @zed-industries/claude-agent-acp)
	ACPCodex  = "codex"  // codex-acp (npm @zed-industries/codex-acp)
	ACPGemini = "gemini" // gemini --experimental-acp
	ACPCursor = "cursor" // agent acp (Cursor's CLI)
)

var acpPresets = map[string][]string{
	ACPClaude: {"claude-agent-acp"},
	ACPCodex:  {"codex-acp"},
	ACPGemini: {"gemini", "--experimental-acp"},
	ACPCursor: {"agent", "acp"},
}

// ACPPresetNames lists the ACP presets, sorted.
func ACPPresetNames() []string {
	names := make([]string, 0, len(acpPresets))
	for n := range acpPresets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Resolved returns the settings with the preset's command filled in where
// the command is unset.
func (a ACP) Resolved() ACP {
	if len(a.Command) == 0 {
		a.Command = slices.Clone(acpPresets[a.Preset])
	}
	return a
}

func (a ACP) validate() error {
	if a.Preset != "" {
		if _, ok := acpPresets[a.Preset]; !ok {
			return fmt.Errorf("acp.preset: %q is not one of %s", a.Preset, strings.Join(ACPPresetNames(), ", "))
		}
	}
	if a.Timeout < 0 {
		return fmt.Errorf("acp.timeout: must be a positive duration such as 10m")
	}
	if r := a.Resolved(); len(r.Command) == 0 || r.Command[0] == "" {
		return fmt.Errorf("acp: the acp driver needs acp.preset (%s) or acp.command, such as [claude-agent-acp]", strings.Join(ACPPresetNames(), ", "))
	}
	return nil
}
