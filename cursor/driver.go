package cursor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentctl/agentctl/internal/layout"
)

// Driver takes one turn with an agent: a prompt in, the reply out.
type Driver interface {
	// Run sends t.Prompt (unless t.Resume) and returns the reply exactly as
	// the agent wrote it. It returns when the reply is read, the turn fails,
	// or ctx ends.
	Run(ctx context.Context, t Turn) (string, error)
}

// Turn is one prompt and what the caller wants to hear about it.
type Turn struct {
	// ID names the turn across processes: the same for every resume of
	// it, new for a retry or a resend. A driver that hands the turn to a
	// seat on another machine keys the seat's journal by it.
	ID     string
	Prompt string
	// NewChat starts a fresh chat first, where the driver knows how: a chat
	// window presses its new-chat key, an exec preset starts a new session.
	NewChat bool
	// Thread names the conversation the prompt belongs to (a message's
	// thread), for the new-chat policy of Remember.
	Thread string
	// Session is the session an exec preset's command continues (its
	// --resume), unless NewChat; empty starts a new one. Remember sets it.
	Session string
	// OnSession, if set, gets the session id an exec preset's command
	// reported for the turn, before Run returns the reply.
	OnSession func(id string)
	// Resume picks up a turn whose submission an earlier process recorded
	// (through OnStage) before it died: the driver only waits for the reply
	// and reads it back. It never sends the prompt again.
	Resume bool
	// ResumeState is what the earlier process got from OnResumeState, if
	// it got that far. With it, Resume knows what the chat offered before
	// the prompt and refuses it as the reply; without it, Resume can only
	// refuse an empty copy and the prompt itself, and takes the first other
	// reply the chat offers once the model has finished.
	ResumeState string
	// OnStage, if set, is called synchronously as the turn passes each
	// Stage, before the driver goes on; an error from it ends the turn.
	OnStage func(Stage) error
	// OnResumeState, if set, is called with the state a later Resume of
	// this turn needs: by a chat driver before StagePressed (how the chat
	// looked before the prompt), by the ACP driver when the agent stopped
	// the prompt unanswered. Callers keep it with the turn's progress.
	// Only drivers that can resume a turn call it.
	OnResumeState func(state string) error
	// OnStart, if set, is called with each process the driver starts for
	// the turn, right after it starts and before the turn goes on, so that
	// a later process can end it with EndChild if this one dies. An error
	// from it ends the process and the turn. Only the exec driver starts
	// processes.
	OnStart func(Child) error
	// OnNote, if set, hears what the driver did that a reader of the
	// receipt must know to trust the reply or the prompt as sent: a reply
	// read from the page's rendering instead of the app's own copy of it,
	// line ends the composer changed. Each note is one sentence.
	OnNote func(note string)
	// OnUsage, if set, hears the tokens and cost the agent's command
	// reported for the turn (an exec preset's), once it ended.
	OnUsage func(Usage)
	// OnProgress, if set, hears what the agent does while the turn lasts,
	// as the ACP driver learns it (a message streaming, a tool call and
	// its status, a plan): one line each, for the log. It must not block.
	OnProgress func(Progress)
	// OnPermission, if set, is asked whenever the agent asks permission to
	// run a tool during the turn (the ACP driver); it may wait for a
	// person, as long as ctx lasts. Without it every request is refused.
	OnPermission func(ctx context.Context, req PermissionRequest) (PermissionVerdict, error)
}

// ProvenUnsent reports whether a turn that failed with err is known not
// to have given the agent its prompt, though it may have pressed the send
// key: the driver saw the prompt still in the agent's input. Unsure beats
// sure: an error that is ErrSubmitUnknown as well is not proof.
func ProvenUnsent(err error) bool {
	return errors.Is(err, ErrNotSubmitted) && !errors.Is(err, ErrSubmitUnknown)
}

// GraceContext is the context of a turn whose process may be asked to
// stop (ctx ending): it ends grace after ctx does, so that a nearly
// finished turn completes, or when cancel is called, with its cause. The
// grace is real time: it is given to the agent's program, not to a loop.
// Ended by ctx, the turn may be resumed by the next process; cancelled
// with ErrAbandoned, nobody will wait for its reply again.
func GraceContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelCauseFunc) {
	turnCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, func() { cancel(nil) })
		context.AfterFunc(turnCtx, func() { t.Stop() })
	})
	return turnCtx, func(cause error) { stop(); cancel(cause) }
}

// Progress is one thing an agent did during a turn.
type Progress struct {
	// Kind is message, thought, tool, plan or permission.
	Kind string
	// Text says what, in one line.
	Text string
}

// Child is a process a driver started for a turn, as it must be recorded
// to be ended by a later process: the pid alone could name a stranger by
// then.
type Child struct {
	PID int `json:"pid"`
	// PGID is the process group the child leads, which holds whatever it
	// spawned; 0 where there are no process groups (Windows).
	PGID int `json:"pgid,omitempty"`
	// StartTime is process.StartTime of the pid, 0 if unknown.
	StartTime uint64 `json:"start_time"`
}

// Stage is a point of no return in a turn.
type Stage string

const (
	// StageHanded: the turn is with another process that takes it (a seat
	// on another machine); this one only waits for its reply.
	StageHanded Stage = "handed"
	// StageInjected: the prompt is in the agent's input, not yet sent.
	StageInjected Stage = "injected"
	// StagePressed: the key or button that sends the prompt is about to
	// be pressed, the chat window confirmed. From here on the agent may
	// have the prompt though nothing proves it yet, and a retry must
	// Resume, unless the turn ends with ErrNotSubmitted: past this stage a
	// driver returns that only once it has seen the prompt still in the
	// agent's input.
	StagePressed Stage = "pressed"
	// StageSubmitted: the agent has certainly received the prompt; from
	// here on a retry must Resume, not send again.
	StageSubmitted Stage = "submitted"
	// StageReplied: the reply has been read back.
	StageReplied Stage = "replied"
)

// Errors a turn can end with, for errors.Is.
var (
	ErrWindowNotFound     = errors.New("agent window not found")
	ErrWindowNotConfirmed = errors.New("agent window could not be confirmed as the active window")
	// ErrNotSubmitted: the prompt was not sent, which past StagePressed
	// the driver saw (the agent's input still holds it).
	ErrNotSubmitted = errors.New("prompt pasted but not submitted")
	// ErrSubmitUnknown: the send key was pressed, but the chat showed
	// neither that it took the prompt nor that its input still holds it.
	// The agent may have the prompt: sending it again could do the work
	// twice.
	ErrSubmitUnknown = errors.New("the send key was pressed, but whether the chat took the prompt is unknown")
	// ErrPromptRefused: the prompt cannot be given to the agent as it is
	// (the app would take it for a command, it is over the hub's message
	// size), and nothing was sent; the same prompt would be refused the
	// same way, so no retry can help.
	ErrPromptRefused    = errors.New("the prompt cannot be given to the agent as it is")
	ErrNoReply          = errors.New("no reply")
	ErrNothingCopied    = errors.New("nothing was copied")
	ErrInputLockTimeout = errors.New("timed out waiting for the desktop input lock")
	ErrExecFailed       = errors.New("agent command failed")
	ErrExecTimeout      = errors.New("agent command timed out")
	ErrReplyLost        = errors.New("the reply of an interrupted turn cannot be recovered")
	// ErrPromptStopped: the resumed turn's prompt was stopped unanswered
	// by the agent when its runner stopped; the caller may send it again.
	ErrPromptStopped = errors.New("the agent stopped the prompt unanswered")
	// ErrAbandoned is the cause a caller cancels a turn's context with
	// when nobody will wait for its reply again (a person skipped it). Any
	// other end of the context, a shutdown, may be followed by a resume.
	ErrAbandoned      = errors.New("the turn was abandoned")
	ErrGUIUnavailable = errors.New("desktop control is not available in this build")
	ErrNotCalibrated  = errors.New("agent window not calibrated")
)

// Options are the parts of a driver that come from the runtime rather than
// from the agent's settings.
type Options struct {
	// LockDir holds the desktop input locks, normally <root>/locks.
	LockDir string
	// Log, if set, gets one line per step of a GUI turn, for `prompt -v`.
	Log io.Writer
	// Agent is the agent whose turns the driver takes, recorded as the
	// holder of the desktop input lock.
	Agent string
	// Sessions, if set, is the folder (SessionsDir) where New keeps the
	// agent's conversation between turns, when its settings ask for one,
	// and where the exec driver keeps what a command printed in a turn
	// that gave no reply. Empty: every turn stands alone, and errors quote
	// what the command printed.
	Sessions string
	// NewSession starts the first turn sent in a fresh conversation; it
	// needs Sessions.
	NewSession bool
	// Warn gets what goes wrong without stopping a turn (a conversation
	// record that cannot be saved).
	Warn func(error)
}

// LockDir returns where the desktop input locks of a runtime root live.
func LockDir(root string) string { return layout.Locks(root) }

// New builds the driver an agent's settings ask for.
func New(s Settings, opts Options) (Driver, error) {
	var d Driver
	kind := kindGUI
	switch s.Driver {
	case DriverExec:
		e, err := NewExec(s.Exec)
		if err != nil {
			return nil, err
		}
		if opts.Sessions != "" {
			e.keepDir = RawOutputDir(opts.Sessions, s.Name)
		}
		d, kind = e, s.Exec.Preset
	case DriverACP:
		a, err := NewACP(s.ACP)
		if err != nil {
			return nil, err
		}
		d, kind = a, acpKind(s.ACP)
	case DriverCDP:
		c, err := NewCDP(s.CDP, s.Timings, opts)
		if err != nil {
			return nil, err
		}
		d = c
	case DriverGUI:
		g, err := NewGUI(s.Window, s.Timings, opts)
		if err != nil {
			return nil, err
		}
		d = g
	default:
		return nil, fmt.Errorf("agent %s: unknown driver %q", s.Name, s.Driver)
	}
	if opts.NewSession {
		if s.NoNewChat != nil {
			return nil, fmt.Errorf("agent %s cannot start a new session: %w", s.Name, s.NoNewChat)
		}
		if opts.Sessions == "" {
			return nil, fmt.Errorf("agent %s cannot start a new session: no folder for sessions", s.Name)
		}
	}
	if opts.Sessions == "" || !(s.KeepsConversation || opts.NewSession) {
		return d, nil
	}
	return Remember(d, Memory{
		Agent: s.Name, Path: SessionFile(opts.Sessions, s.Name), Kind: kind,
		Policy: s.NewChat, Forks: s.Exec.ForksSession, Fresh: opts.NewSession, Warn: opts.Warn,
	}), nil
}

// stage reports s to the turn's callback.
func (t Turn) stage(s Stage) error {
	if t.OnStage == nil {
		return nil
	}
	if err := t.OnStage(s); err != nil {
		return fmt.Errorf("turn stopped after stage %s: %w", s, err)
	}
	return nil
}

// note tells the turn's caller what it must know about the turn.
func (t Turn) note(format string, args ...any) {
	if t.OnNote != nil {
		t.OnNote(fmt.Sprintf(format, args...))
	}
}
