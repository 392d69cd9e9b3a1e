package cursor

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/clock"
)

// Settings are what New needs of an agent, in the driver's own terms:
// plain values, every profile and preset already applied by whoever read
// them from a file, so the drivers know nothing of how settings are
// written down.
type Settings struct {
	// Name is the agent's, for errors.
	Name   string
	Driver DriverKind
	Exec   ExecSettings
	CDP    CDPSettings
	ACP    ACPSettings
	Window WindowSettings
	// Timings are the GUI and CDP drivers' waits, shared by every agent.
	Timings Timings
	NewChat NewChatPolicy
	// KeepsConversation ties the agent's turns together by a record
	// between turns (a preset's session, a new-chat policy).
	KeepsConversation bool
	// NoNewChat says why the driver cannot start a fresh conversation;
	// nil when it can.
	NoNewChat error
}

// DriverKind names a driver.
type DriverKind string

// The drivers New builds.
const (
	DriverGUI  DriverKind = "gui"
	DriverExec DriverKind = "exec"
	DriverCDP  DriverKind = "cdp"
	DriverACP  DriverKind = "acp"
)

// Timings are the waits of GUI and CDP turns. A zero field takes its value
// from DefaultTimings.
type Timings struct {
	// Quiet is how long the chat must stay unchanged after the busy
	// indicator went back to rest before the reply is copied.
	Quiet time.Duration
	// MaxPause is, without a busy indicator, how long the reply must stay
	// unchanged to count as finished.
	MaxPause time.Duration
	// Submit is how long to wait for the chat to show a submitted prompt
	// before pressing the submit key once more.
	Submit time.Duration
	// TurnTimeout bounds a whole turn.
	TurnTimeout time.Duration
	// LockWait is how long a turn waits for the desktop input lock.
	LockWait time.Duration
}

// DefaultTimings are the waits of a turn whose settings name none.
func DefaultTimings() Timings {
	return Timings{
		Quiet:       100 * time.Millisecond,
		MaxPause:    15 * time.Second,
		Submit:      2 * time.Second,
		TurnTimeout: 15 * time.Minute,
		LockWait:    2 * time.Minute,
	}
}

// orDefault returns t with each zero field taken from DefaultTimings.
func (t Timings) orDefault() Timings {
	def := DefaultTimings()
	for _, f := range []struct{ v, def *time.Duration }{
		{&t.Quiet, &def.Quiet}, {&t.MaxPause, &def.MaxPause}, {&t.Submit, &def.Submit},
		{&t.TurnTimeout, &def.TurnTimeout}, {&t.LockWait, &def.LockWait},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return t
}

// ExecSettings are the exec driver's, its preset's defaults applied.
type ExecSettings struct {
	// Preset names the command-line agent whose JSON output is read and
	// whose session is continued; empty: stdout is the reply.
	Preset string
	// Command is the program and its arguments; an argument holding
	// PromptPlaceholder gets the prompt, otherwise the prompt goes to stdin.
	Command []string
	// Resume are the arguments that continue a session, with
	// SessionPlaceholder replaced by its id.
	Resume []string
	// ReplyField and SessionField name the JSON fields of the reply and
	// the session id.
	ReplyField, SessionField string
	// Timeout ends the turn; zero: DefaultExecTimeout.
	Timeout time.Duration
	// Dir is the command's working folder; empty: the runner's.
	Dir string
	// Env adds NAME=VALUE lines to the runner's environment for the
	// command, replacing a variable of the same name.
	Env []string
	// ModelArgs give the command its model, and PermissionArgs what it
	// may do without asking. They go where the program's options go:
	// before a last argument carrying the prompt, else at the end; Resume
	// follows them.
	ModelArgs      []string
	PermissionArgs []string
	// ForksSession says Resume forks the session it continues into a new
	// one, leaving the one it forked as it was.
	ForksSession bool
	// Clock times how long an idle seat keeps its host (hostIdle); nil:
	// the system clock.
	Clock clock.Clock
}

// ACPSettings are the ACP driver's: the program that speaks the Agent
// Client Protocol on its stdio, started once per seat.
type ACPSettings struct {
	// Preset names the agent (claude, codex, gemini, cursor), for the
	// conversation record; empty for a command of the seat's own.
	Preset string
	// Command is the program and its arguments.
	Command []string
	// Dir is the folder the agent works in and the only one whose files
	// it may read and write through the driver; empty: the runner's.
	Dir string
	// Env adds NAME=VALUE lines to the runner's environment.
	Env []string
	// Model is chosen through the session's model selection; empty: the
	// agent's own default.
	Model string
	// Timeout bounds a turn; zero: DefaultExecTimeout.
	Timeout time.Duration
}

// Placeholders in ExecSettings' arguments.
const (
	PromptPlaceholder  = "{prompt}"
	SessionPlaceholder = "{session}"
)

// DefaultExecTimeout bounds an exec turn whose timeout is not set.
const DefaultExecTimeout = 10 * time.Minute

// CDPSettings say where a chat page is and which elements of it the CDP
// driver works, with the app's profile already applied: an empty selector
// is one the app does not have.
type CDPSettings struct {
	// Endpoint is the app's DevTools address, on loopback.
	Endpoint string
	// Target is a regular expression on page titles.
	Target string
	// Profile names the app whose chat the page shows.
	Profile Profile
	// Composer, Submit, Reply, Copy, Body, Error and NewChat are CSS
	// selectors; Submit empty sends with Enter.
	Composer, Submit string
	// Busy matches a visible element while the model works; NoBusy says the
	// page shows none.
	Busy     string
	Reply    string
	Copy     string
	CopyMenu string // a context-menu item's label that copies the reply
	Body     string
	Error    string
	NewChat  string
	// Read is how the reply is read; empty: ReadCopy.
	Read ReadMode
	// Clipboard is where the copy is caught; empty: ClipboardPage.
	Clipboard ClipboardMode
	// Quiet is how long the reply's text must stay unchanged once the busy
	// element is gone; zero: DefaultCDPQuiet.
	Quiet time.Duration
}

// Profile names a chat app whose page or window agentctl knows.
type Profile string

// Known apps.
const (
	ProfileCursor Profile = "cursor"
	ProfileVSCode Profile = "vscode"
)

// ReadMode is how a CDP seat reads the reply.
type ReadMode string

// ReadCopy reads the app's own copy of the reply; ReadRendered the text
// the page shows, Markdown lost.
const (
	ReadCopy     ReadMode = "copy"
	ReadRendered ReadMode = "rendered"
)

// ClipboardMode is where a CDP seat catches the copy.
type ClipboardMode string

// ClipboardPage catches it inside the page; ClipboardSystem on the
// desktop's clipboard, under the input lock.
const (
	ClipboardPage   ClipboardMode = "page"
	ClipboardSystem ClipboardMode = "system"
)

// NoBusy as CDPSettings.Busy says the page shows nothing while the model
// works.
const NoBusy = "none"

// DefaultCDPQuiet is CDPSettings.Quiet when unset: more than a frame at
// 60 Hz.
const DefaultCDPQuiet = 20 * time.Millisecond

// withDefaults fills the modes and the quiet period left unset.
func (c CDPSettings) withDefaults() CDPSettings {
	if c.Read == "" {
		c.Read = ReadCopy
	}
	if c.Clipboard == "" {
		c.Clipboard = ClipboardPage
	}
	if c.Quiet <= 0 {
		c.Quiet = DefaultCDPQuiet
	}
	return c
}

// WindowSettings say where a chat window is and where its controls are,
// with the app's profile already applied.
type WindowSettings struct {
	// Title is a regular expression on window titles; PID, if set, also
	// requires the window to be that process's.
	Title string
	PID   int
	// Absolute: the points are screen coordinates, not offsets from the
	// window's corner.
	Absolute bool
	Input    *Point
	// Copy is the reply's copy button; CopyKeys the chords that copy it
	// instead, pressed from the input box if CopyFromInput.
	Copy          *Point
	CopyKeys      []string
	CopyFromInput bool
	// CheckKeys copy the whole chat, a second reading each reply is
	// checked against.
	CheckKeys []string
	Composer  ComposerKind
	Reply     *Rect
	Busy      *Point
	// ErrorMark looks, before a reply is passed on, for the red mark an
	// app draws at the end of a reply it ended in an error or a cancel
	// (see findErrorMark).
	ErrorMark bool
	// SubmitKey sends the prompt; empty: enter.
	SubmitKey string
	// NewChatKey, if set, starts a fresh chat.
	NewChatKey string
}

// Point is a position in pixels.
type Point struct{ X, Y int }

// Rect is a region in pixels.
type Rect struct{ X, Y, W, H int }

// ComposerKind says what an input box does to a pasted prompt.
type ComposerKind string

// ComposerPlain does nothing to it; ComposerMonaco (VS Code's editor)
// turns CRLF into LF.
const (
	ComposerPlain  ComposerKind = "plain"
	ComposerMonaco ComposerKind = "monaco"
)

// Calibrated reports what a window still lacks before a turn can run.
func (w WindowSettings) Calibrated() error {
	var missing []string
	if w.Title == "" {
		missing = append(missing, "title")
	}
	if w.Input == nil {
		missing = append(missing, "input")
	}
	if w.Copy == nil && len(w.CopyKeys) == 0 {
		missing = append(missing, "copy or copy_keys")
	}
	if w.Reply == nil {
		missing = append(missing, "reply")
	}
	if len(missing) > 0 {
		return fmt.Errorf("window not calibrated: missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// NewChatPolicy says when an agent's turns start a fresh conversation;
// the zero value never does.
type NewChatPolicy struct {
	// PerThread starts one whenever a message belongs to another thread
	// than the last turn's.
	PerThread bool
	// Every starts one after this many turns; 0: never.
	Every int
}
