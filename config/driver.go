package config

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Driver names for Agent.Driver.
const (
	DriverGUI  = "gui"
	DriverExec = "exec"
)

// Window says where an agent's chat window is and where its controls are.
// `agentctl calibrate` writes it.
type Window struct {
	// Title is a regular expression matched against window titles; exactly
	// one window must match (or, with PID, one window of that process).
	Title string `yaml:"title,omitempty"`
	// PID, when set, also requires the window to belong to this process.
	PID int `yaml:"pid,omitempty"`
	// Absolute means the positions below are screen coordinates (Dream.OS
	// style, negative x on a monitor left of the primary one) rather than
	// offsets from the window's top-left corner.
	Absolute bool `yaml:"absolute,omitempty"`
	// Input is the chat input box.
	Input *Point `yaml:"input,omitempty"`
	// Profile names a chat app whose copy route and composer agentctl
	// knows ("vscode"); it fills CopyKeys, CopyFromInput, CheckKeys and
	// Composer where they are unset (see WindowProfile).
	Profile string `yaml:"profile,omitempty"`
	// Copy is the reply's copy button; CopyKeys is the alternative: key
	// chords pressed in turn to copy the reply, such as [ctrl+a, ctrl+c].
	Copy     *Point   `yaml:"copy,omitempty"`
	CopyKeys []string `yaml:"copy_keys,omitempty"`
	// CopyFromInput clicks the input box before CopyKeys, so they start
	// from the composer whatever had the focus: VS Code's Ctrl+Up then
	// focuses the last reply, however tall it is.
	CopyFromInput bool `yaml:"copy_from_input,omitempty"`
	// CheckKeys, if set, copy the whole chat as text (VS Code: the last
	// reply's context menu, "Copy All"), pressed right after CopyKeys from
	// where they left the keyboard: a second reading that each copied
	// reply is checked against. The copy must hold, in order, every word
	// of the transcript's answer to the prompt, and be exactly the last
	// turn of the transcript, right after the prompt's, so a code block's
	// copy, a cut reply or the previous reply is refused, and the reply
	// is told new without a copy before the prompt.
	CheckKeys []string `yaml:"check_keys,omitempty"`
	// Composer says what the input box does to a pasted prompt: "plain"
	// (the default: nothing) or "monaco" (a Monaco editor, as in VS Code:
	// it turns CRLF into LF, so the driver does that itself and notes it
	// in the receipt, as it notes leading whitespace, which the chat
	// drops, and a leading /word, which it takes as a command).
	Composer string `yaml:"composer,omitempty"`
	// ErrorMark looks for the mark an app draws at the end of a reply it
	// ended in an error or a cancel (VS Code: a red ring with a cross),
	// which no copy of the reply shows, before the reply is passed on: the
	// chat is scrolled to its end, and the reply region must show it.
	ErrorMark bool `yaml:"error_mark,omitempty"`
	// Reply is the region whose pixels show the reply streaming in. It must
	// not contain a blinking caret.
	Reply *Rect `yaml:"reply,omitempty"`
	// Busy is a point that looks different while the model works and the
	// same as before the prompt whenever it rests, such as Cursor's stop
	// button (the send button's place). With it, a reply counts as finished
	// when the model says so; without it, only when the reply region has
	// outlasted gui.max_pause unchanged.
	Busy *Point `yaml:"busy,omitempty"`
	// SubmitKey sends the prompt: "enter" (default) or "ctrl+enter".
	SubmitKey string `yaml:"submit_key,omitempty"`
	// NewChatKey, if set, is pressed when a turn asks for a fresh chat
	// ("ctrl+n" or "ctrl+t"). "mod" in a chord means Cmd on macOS, Ctrl
	// elsewhere.
	NewChatKey string `yaml:"new_chat_key,omitempty"`
}

// Point is a position in pixels, written [x, y].
type Point struct{ X, Y int }

// Rect is a region in pixels, written [x, y, width, height].
type Rect struct{ X, Y, W, H int }

// Exec runs a headless agent: one process per turn, the reply is its stdout
// or, with a preset, read from the JSON it prints.
type Exec struct {
	// Preset names the command-line agent the command is (config/preset.go):
	// its JSON output is read for the reply and the session id, and the next
	// turn continues that session. Empty: stdout is the reply as it is, and
	// every turn starts afresh.
	Preset string `yaml:"preset,omitempty"`
	// Command is the program and its arguments; a preset has its own. An
	// argument containing {prompt} gets the prompt substituted; without one
	// the prompt goes to stdin.
	Command []string `yaml:"command,omitempty"`
	// Resume are the arguments that continue a session, with {session}
	// replaced by its id, put where the program's options go: before a last
	// argument holding {prompt}, else at the end, after the model's and the
	// permissions'. Presets have their own.
	Resume []string `yaml:"resume,omitempty"`
	// ReplyField and SessionField name the top-level JSON fields holding
	// the reply and the session id; presets have their own (result and
	// session_id).
	ReplyField   string `yaml:"reply_field,omitempty"`
	SessionField string `yaml:"session_field,omitempty"`
	// Timeout ends the turn and kills the whole process group.
	Timeout Duration `yaml:"timeout,omitempty"`
	// Permissions is what a preset's agent may do without asking: ask (its
	// default), auto (edit in its folder) or bypass (anything); see
	// permissionOptions.
	Permissions string `yaml:"permissions,omitempty"`
}

// PromptPlaceholder is replaced by the prompt in Exec.Command arguments.
const PromptPlaceholder = "{prompt}"

// GUI holds the timings of GUI turns, shared by every agent.
type GUI struct {
	// Quiet is how long the chat must stay unchanged after the busy
	// indicator went back to rest before the reply is copied: the chat's
	// last drawing. It protects against copying a reply that is still
	// being drawn.
	Quiet Duration `yaml:"quiet"`
	// MaxPause is, for a window without a busy indicator, how long the
	// reply region must stay unchanged for the reply to count as finished:
	// it must outlast the longest pause a model makes mid-reply (running a
	// tool, thinking between paragraphs), or a reply is cut short.
	MaxPause Duration `yaml:"max_pause"`
	// FirstChange is read for older files and otherwise ignored: a model
	// may think up to TurnTimeout.
	FirstChange Duration `yaml:"first_change,omitempty"`
	// Submit is how long to wait for the chat to show a submitted prompt
	// before pressing the submit key once more, and then giving up.
	Submit Duration `yaml:"submit"`
	// TurnTimeout bounds a whole turn.
	TurnTimeout Duration `yaml:"turn_timeout"`
	// LockWait is how long a turn waits for the desktop input lock, which
	// every agentctl process on the same display shares.
	LockWait Duration `yaml:"lock_wait"`
}

// DefaultGUI returns the GUI timings used when the file sets none.
func DefaultGUI() GUI {
	return GUI{
		Quiet:       Duration(100 * time.Millisecond),
		MaxPause:    Duration(15 * time.Second),
		Submit:      Duration(2 * time.Second),
		TurnTimeout: Duration(15 * time.Minute),
		LockWait:    Duration(2 * time.Minute),
	}
}

// DefaultExecTimeout bounds an exec turn whose timeout is not set.
const DefaultExecTimeout = 10 * time.Minute

// MinQuiet is the shortest quiet period the screenshots can see: two
// frames.
const MinQuiet = 80 * time.Millisecond

// SafeMaxPause is the shortest gui.max_pause that doctor does not warn
// about: models pause this long for tool runs.
const SafeMaxPause = 10 * time.Second

var chordPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^((ctrl|control|shift|alt|cmd|command|super|win|mod)\+)*([a-z0-9]+)$`)
})

// ValidChord checks the shape of a key chord such as "ctrl+enter".
func ValidChord(s string) error {
	if !chordPattern().MatchString(s) {
		return fmt.Errorf("%q is not a key chord such as enter, ctrl+enter or mod+n", s)
	}
	return nil
}

// EffectiveDriver returns the agent's driver name, "gui" when unset.
func (a Agent) EffectiveDriver() string {
	if a.Driver == "" {
		return DriverGUI
	}
	return a.Driver
}

func (a Agent) validateDriver() error {
	switch a.EffectiveDriver() {
	case DriverGUI:
		return a.Window.validate()
	case DriverExec:
		return a.Exec.validate()
	case DriverCDP:
		return a.CDP.validate()
	case DriverACP:
		return a.ACP.validate()
	default:
		return fmt.Errorf("driver: %q is not gui, exec, cdp or acp", a.Driver)
	}
}

// validate checks what is set; a window without a title is allowed here
// (a fresh config before calibration) and refused when a turn runs.
func (w Window) validate() error {
	if w.Title != "" {
		if _, err := regexp.Compile(w.Title); err != nil {
			return fmt.Errorf("window.title: not a regular expression: %v", err)
		}
	}
	if w.PID < 0 {
		return fmt.Errorf("window.pid: must be a process id")
	}
	if w.Reply != nil && (w.Reply.W <= 0 || w.Reply.H <= 0) {
		return fmt.Errorf("window.reply: width and height must be positive")
	}
	if w.Copy != nil && len(w.CopyKeys) > 0 {
		return fmt.Errorf("window: set copy or copy_keys, not both")
	}
	if _, ok := WindowProfile(w.Profile); !ok {
		return fmt.Errorf("window.profile: %q is not a known app (%s)", w.Profile, ProfileVSCode)
	}
	if w.Composer != "" && w.Composer != ComposerPlain && w.Composer != ComposerMonaco {
		return fmt.Errorf("window.composer: %q is neither %s nor %s", w.Composer, ComposerPlain, ComposerMonaco)
	}
	if w.CopyFromInput && w.Copy != nil {
		return fmt.Errorf("window: copy_from_input goes with copy_keys, not with a copy button")
	}
	keys := append(append([]string{}, w.CopyKeys...), w.CheckKeys...)
	for _, k := range []string{w.SubmitKey, w.NewChatKey} {
		if k != "" {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if err := ValidChord(strings.ToLower(k)); err != nil {
			return fmt.Errorf("window: %w", err)
		}
	}
	return nil
}

func (g GUI) validate() error {
	for _, d := range []struct {
		name string
		v    Duration
	}{{"quiet", g.Quiet}, {"max_pause", g.MaxPause}, {"submit", g.Submit}, {"turn_timeout", g.TurnTimeout}, {"lock_wait", g.LockWait}} {
		if d.v <= 0 {
			return fmt.Errorf("gui.%s: must be a positive duration such as 30s", d.name)
		}
	}
	if g.Quiet.D() < MinQuiet {
		return fmt.Errorf("gui.quiet: %s is shorter than %s, two screenshots apart", g.Quiet, MinQuiet)
	}
	if g.FirstChange < 0 {
		return fmt.Errorf("gui.first_change: must be a positive duration (it is no longer used)")
	}
	if g.MaxPause.D() < g.Quiet.D() {
		return fmt.Errorf("gui.max_pause: must be at least gui.quiet")
	}
	if g.TurnTimeout.D() <= g.MaxPause.D() {
		return fmt.Errorf("gui.turn_timeout: must be longer than gui.max_pause")
	}
	return nil
}
