package config

import (
	"fmt"
	"slices"
	"strings"
)

// Preset names for Exec.Preset: command-line agents whose JSON output is
// read and whose session is continued from turn to turn.
const (
	PresetClaude      = "claude"       // claude -p --output-format stream-json
	PresetCodex       = "codex"        // codex exec --json
	PresetCursorAgent = "cursor-agent" // cursor-agent -p --output-format json
	PresetGemini      = "gemini"       // gemini --output-format stream-json
	PresetGeneric     = "generic"      // any command printing one JSON object
)

// SessionPlaceholder is replaced by the session id in Exec.Resume.
const SessionPlaceholder = "{session}"

// presets are what each preset fills in where the agent's settings are
// silent. The resume arguments follow the program's other options, before
// a last argument carrying the prompt.
//
// A turn whose command fails may leave its prompt in the session it
// continued. Where the tool can, every turn therefore forks the session
// it continues into a new one (claude --fork-session, codex exec fork),
// and only a turn that got its reply makes its session the one the next
// turn continues: a retried prompt never finds its failed attempt in the
// conversation. Gemini CLI and cursor-agent cannot fork, so a retry there
// continues the session with the failed attempt in it.
var presets = map[string]Exec{
	PresetClaude: {
		// Read from stdin; stream-json puts each event on a line, so the
		// result line ends the turn even if the program lingers.
		Command: []string{"claude", "-p", "--output-format", "stream-json", "--verbose"},
		Resume:  []string{"--resume", SessionPlaceholder, "--fork-session"}, ReplyField: "result", SessionField: "session_id",
	},
	PresetCodex: {
		// exec refuses a folder outside a git work tree without
		// --skip-git-repo-check; the seat's cwd is the user's choice.
		// The prompt goes to stdin: a command line is every local
		// user's to read. exec reads stdin when it has no prompt; fork
		// only when told so with "-".
		Command: []string{"codex", "exec", "--json", "--skip-git-repo-check"},
		Resume:  []string{"fork", SessionPlaceholder, "-"},
	},
	PresetCursorAgent: {
		Command: []string{"cursor-agent", "-p", "--output-format", "json", PromptPlaceholder},
		Resume:  []string{"--resume", SessionPlaceholder}, ReplyField: "result", SessionField: "session_id",
	},
	PresetGemini: {
		// Headless, Gemini CLI refuses a folder not trusted before;
		// --skip-trust trusts the seat's cwd, which the user chose, for
		// the run only. The prompt goes to stdin, which it reads when it
		// is not a terminal, rather than onto the command line.
		Command: []string{"gemini", "--output-format", "stream-json", "--skip-trust"},
		Resume:  []string{"--resume", SessionPlaceholder},
	},
	PresetGeneric: {
		Resume: []string{"--resume", SessionPlaceholder}, ReplyField: "result", SessionField: "session_id",
	},
}

// forkingPresets are the presets whose own Resume forks the session.
var forkingPresets = map[string]bool{PresetClaude: true, PresetCodex: true}

// ForksSession says the seat's resume arguments are its preset's own,
// which fork the session each turn continues.
func (e Exec) ForksSession() bool { return forkingPresets[e.Preset] && len(e.Resume) == 0 }

// modelOptions are how each preset's program is told its model; a plain
// command puts the model in its own arguments.
var modelOptions = map[string][]string{
	PresetClaude:      {"--model", ModelPlaceholder},
	PresetCodex:       {"-m", ModelPlaceholder},
	PresetCursorAgent: {"--model", ModelPlaceholder},
	PresetGemini:      {"-m", ModelPlaceholder},
}

// Permission modes for Exec.Permissions: what the agent may do without
// asking. Headless, nobody answers a question, so "ask" means an action
// that would need approval is refused.
const (
	PermissionsAsk    = "ask"    // the tool's default: actions needing approval are refused
	PermissionsAuto   = "auto"   // edits in the working folder go ahead
	PermissionsBypass = "bypass" // everything goes ahead, unsandboxed
)

// permissionOptions are each preset's arguments for each mode; a mode a
// preset lacks is refused when the file is read.
var permissionOptions = map[string]map[string][]string{
	PresetClaude: {
		PermissionsAsk: {}, PermissionsAuto: {"--permission-mode", "acceptEdits"},
		PermissionsBypass: {"--dangerously-skip-permissions"},
	},
	PresetCodex: {
		PermissionsAsk: {}, PermissionsAuto: {"--sandbox", "workspace-write"},
		PermissionsBypass: {"--dangerously-bypass-approvals-and-sandbox"},
	},
	PresetCursorAgent: {PermissionsAsk: {}, PermissionsBypass: {"--force"}},
	PresetGemini: {
		PermissionsAsk: {}, PermissionsAuto: {"--approval-mode", "auto_edit"}, PermissionsBypass: {"--yolo"},
	},
}

// PermissionArgs returns the arguments that give the program the
// permissions the seat asks for: none when it asks for none.
func (e Exec) PermissionArgs() []string { return permissionOptions[e.Preset][e.Permissions] }

func (e Exec) validatePermissions() error {
	if e.Permissions == "" {
		return nil
	}
	modes, ok := permissionOptions[e.Preset]
	if !ok {
		return fmt.Errorf("exec.permissions: a command without a preset agentctl knows takes its permission options in exec.command")
	}
	if _, ok := modes[e.Permissions]; !ok {
		var names []string
		for m := range modes {
			names = append(names, m)
		}
		slices.Sort(names)
		return fmt.Errorf("exec.permissions: %q is not one the %s preset has (%s)", e.Permissions, e.Preset, strings.Join(names, ", "))
	}
	return nil
}

// ModelPlaceholder is replaced by the seat's model in a preset's model
// option.
const ModelPlaceholder = "{model}"

// ModelArgs returns the arguments that give the program its model: none
// when model is empty.
func (e Exec) ModelArgs(model string) []string {
	if model == "" {
		return nil
	}
	var out []string
	for _, a := range modelOptions[e.Preset] {
		out = append(out, strings.ReplaceAll(a, ModelPlaceholder, model))
	}
	return out
}

// PresetNames lists the exec presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Resolved returns the settings with what the preset gives filled in where
// they are unset. Without a preset they are returned as they are.
func (e Exec) Resolved() Exec {
	p, ok := presets[e.Preset]
	if !ok {
		return e
	}
	if len(e.Command) == 0 {
		e.Command = p.Command
	}
	if len(e.Resume) == 0 {
		e.Resume = p.Resume
	}
	if e.ReplyField == "" {
		e.ReplyField = p.ReplyField
	}
	if e.SessionField == "" {
		e.SessionField = p.SessionField
	}
	return e
}

func (e Exec) validate() error {
	if e.Preset == "" {
		if len(e.Resume) > 0 || e.ReplyField != "" || e.SessionField != "" {
			return fmt.Errorf("exec: resume, reply_field and session_field need exec.preset (one of %s): a plain command's stdout is the reply", strings.Join(PresetNames(), ", "))
		}
	} else if _, ok := presets[e.Preset]; !ok {
		return fmt.Errorf("exec.preset: %q is not one of %s", e.Preset, strings.Join(PresetNames(), ", "))
	}
	r := e.Resolved()
	if len(r.Command) == 0 || r.Command[0] == "" {
		if e.Preset == PresetGeneric {
			return fmt.Errorf("exec.command: the generic preset needs the command, such as [my-agent, --json, \"{prompt}\"]")
		}
		return fmt.Errorf("exec.command: the exec driver needs a command, such as [claude, -p, \"{prompt}\"], or a preset")
	}
	if e.Preset != "" && !slices.ContainsFunc(r.Resume, func(a string) bool { return strings.Contains(a, SessionPlaceholder) }) {
		return fmt.Errorf("exec.resume: no argument holds %s, so no session could be continued", SessionPlaceholder)
	}
	if e.Timeout < 0 {
		return fmt.Errorf("exec.timeout: must be a positive duration such as 10m")
	}
	return e.validatePermissions()
}

// NewChat says when an agent's turns leave the conversation so far and
// start a fresh one: a chat window presses window.new_chat_key, an exec
// preset starts a new session. The zero value never does.
type NewChat struct {
	// PerThread starts a fresh conversation whenever a message belongs to
	// another thread than the last turn's.
	PerThread bool `yaml:"per_thread,omitempty"`
	// Every starts a fresh conversation after this many turns in one; 0:
	// never.
	Every int `yaml:"every,omitempty"`
}

// Set reports whether the policy ever starts a fresh conversation.
func (n NewChat) Set() bool { return n.PerThread || n.Every > 0 }

// NewChatError says why the agent's driver cannot start a fresh
// conversation, or returns nil when it can.
func (a Agent) NewChatError() error {
	switch a.EffectiveDriver() {
	case DriverGUI:
		if a.Window.NewChatKey == "" {
			return fmt.Errorf("its chat window has no window.new_chat_key to start a new chat with")
		}
	case DriverCDP:
		if a.CDP.Resolved().NewChat == "" {
			return fmt.Errorf("its chat page has no cdp.new_chat selector to start a new chat with")
		}
	case DriverExec:
		if a.Exec.Preset == "" {
			return fmt.Errorf("its exec command has no exec.preset, so it keeps no session: every turn starts afresh")
		}
	}
	// An acp seat always can: session/new.
	return nil
}

// KeepsConversation reports whether the agent's turns are tied together by
// a record between turns: an exec preset's or an ACP agent's session, or a
// new-chat policy.
func (a Agent) KeepsConversation() bool {
	return a.NewChat.Set() || (a.EffectiveDriver() == DriverExec && a.Exec.Preset != "") || a.EffectiveDriver() == DriverACP
}

// Validate checks the agent's driver settings and new-chat policy, as a
// command that changes them (agentctl run --preset) must again.
func (a Agent) Validate() error {
	if err := a.validateDriver(); err != nil {
		return err
	}
	if err := a.validateProgram(); err != nil {
		return err
	}
	return a.validateNewChat()
}

func (a Agent) validateNewChat() error {
	if a.NewChat.Every < 0 {
		return fmt.Errorf("new_chat.every: must be 0 (never) or a number of turns")
	}
	if a.NewChat.Set() {
		if err := a.NewChatError(); err != nil {
			return fmt.Errorf("new_chat: %w", err)
		}
	}
	return nil
}
