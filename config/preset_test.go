package config

import (
	"strings"
	"testing"
)

func TestPresetsFillWhatIsUnset(t *testing.T) {
	cfg, err := Parse("agentctl.yaml", []byte(`agents:
  - name: Agent-1
    driver: exec
    exec: {preset: claude}
  - name: Agent-2
    driver: exec
    exec: {preset: cursor-agent, command: [agent, -p, --output-format, json, --trust, "{prompt}"]}
    new_chat: {per_thread: true, every: 20}
  - name: Agent-3
    driver: exec
    exec: {preset: generic, command: [my-agent, --json], resume: [--continue, "{session}"], reply_field: answer}
`))
	if err != nil {
		t.Fatal(err)
	}
	claude := cfg.Agents[0].Exec.Resolved()
	if strings.Join(claude.Command, " ") != "claude -p --output-format stream-json --verbose" || strings.Join(claude.Resume, " ") != "--resume {session} --fork-session" ||
		claude.ReplyField != "result" || claude.SessionField != "session_id" {
		t.Errorf("claude preset resolved to %+v", claude)
	}
	cursor := cfg.Agents[1].Exec.Resolved()
	if cursor.Command[0] != "agent" || strings.Join(cursor.Resume, " ") != "--resume {session}" {
		t.Errorf("cursor-agent preset with its own command resolved to %+v", cursor)
	}
	if nc := cfg.Agents[1].NewChat; !nc.PerThread || nc.Every != 20 || !cfg.Agents[1].KeepsConversation() {
		t.Errorf("new_chat = %+v", nc)
	}
	generic := cfg.Agents[2].Exec.Resolved()
	if generic.ReplyField != "answer" || generic.SessionField != "session_id" || generic.Resume[0] != "--continue" {
		t.Errorf("generic preset resolved to %+v", generic)
	}
}

func TestPresetsAndNewChatRefuseWhatCannotWork(t *testing.T) {
	tests := map[string]string{
		"exec: {preset: gpt}":                                         `"gpt" is not one of claude, codex, cursor-agent, gemini, generic`,
		"exec: {preset: generic}":                                     "the generic preset needs the command",
		"exec: {command: [cat], resume: [--resume, x]}":               "need exec.preset",
		"exec: {preset: claude, resume: [--resume]}":                  "no argument holds {session}",
		"exec: {command: [cat]}\n    new_chat: {every: 3}":            "new_chat: its exec command has no exec.preset",
		"exec: {preset: claude}\n    new_chat: {every: -1}":           "new_chat.every",
		"exec: {}\n    driver: gui\n    new_chat: {per_thread: true}": "no window.new_chat_key",
		"exec: {command: [cat]}\n    model: m1":                       "a plain command has no model option",
		"exec: {preset: claude}\n    model: \"a b\"":                  "holds white space",
		"exec: {preset: claude}\n    env: {\"A=B\": x}":               "is not a variable name",
		"exec: {}\n    driver: gui\n    cwd: /tmp":                    "only a seat that runs a program",
		"exec: {command: [cat], permissions: bypass}":                 "exec.permissions: a command without a preset",
		"exec: {preset: cursor-agent, permissions: auto}":             `"auto" is not one the cursor-agent preset has (ask, bypass)`,
		"exec: {preset: codex, permissions: yes}":                     `"yes" is not one the codex preset has (ask, auto, bypass)`,
	}
	for agent, want := range tests {
		data := "agents:\n  - name: Agent-1\n    driver: exec\n    " + agent + "\n"
		data = strings.Replace(data, "    driver: exec\n    exec: {}\n    driver: gui\n", "    driver: gui\n", 1)
		_, err := Parse("agentctl.yaml", []byte(data))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", data, err, want)
		}
	}
	if _, err := Parse("x", []byte("agents:\n  - name: Agent-1\n    window: {new_chat_key: ctrl+n}\n    new_chat: {per_thread: true}\n")); err != nil {
		t.Errorf("a chat window with a new-chat key refused a policy: %v", err)
	}
}

func TestACPSeatsTakeAPresetOrACommandAndAProgram(t *testing.T) {
	cfg, err := Parse("agentctl.yaml", []byte(`agents:
  - name: Agent-1
    driver: acp
    acp: {preset: gemini}
    cwd: /srv/work
    env: {GEMINI_API_KEY: k}
    model: gemini-2.5-pro
  - name: Agent-2
    driver: acp
    acp: {preset: claude, command: [npx, claude-agent-acp]}
`))
	if err != nil {
		t.Fatal(err)
	}
	for agent, want := range map[string]string{
		"driver: acp":                         "the acp driver needs acp.preset",
		"driver: acp\n    acp: {preset: zed}": `acp.preset: "zed" is not one of claude, codex, cursor, gemini`,
	} {
		if _, err := Parse("x", []byte("agents:\n  - name: Agent-1\n    "+agent+"\n")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", agent, err, want)
		}
	}
	a1, _ := cfg.Agent("Agent-1")
	a2, _ := cfg.Agent("Agent-2")
	if got := a1.ACP.Resolved().Command; strings.Join(got, " ") != "gemini --experimental-acp" {
		t.Errorf("gemini's command %q", got)
	}
	if got := a2.ACP.Resolved().Command; strings.Join(got, " ") != "npx claude-agent-acp" {
		t.Errorf("a seat's own command gave way to the preset's: %q", got)
	}
	if !a1.KeepsConversation() || a1.NewChatError() != nil || cfg.Run.Resends(a1) {
		t.Errorf("an acp seat keeps its session (%v), can start a new one (%v), and never resends by default (%v)", a1.KeepsConversation(), a1.NewChatError(), cfg.Run.Resends(a1))
	}
}

// A command line is every local account's to read (ps, /proc), so the
// presets whose programs read a prompt from stdin never put it there, nor
// in the arguments that resume a session. Cursor's CLI takes it only as
// an argument.
func TestPresetsKeepThePromptOffTheCommandLine(t *testing.T) {
	for _, name := range []string{PresetClaude, PresetCodex, PresetGemini} {
		e := Exec{Preset: name}.Resolved()
		if args := strings.Join(append(e.Command, e.Resume...), " "); strings.Contains(args, PromptPlaceholder) {
			t.Errorf("the %s preset puts the prompt on its command line: %s", name, args)
		}
	}
}
