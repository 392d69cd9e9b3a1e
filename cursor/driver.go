package cursor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"agentctl/config"
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
	Prompt string
	// NewChat starts a fresh chat first, where the driver knows how.
	NewChat bool
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
	// OnResumeState, if set, is called once the prompt is shown and before
	// the reply starts, with the state a later Resume of this turn needs.
	// Callers keep it with the turn's progress. Only drivers that can
	// resume a turn call it.
	OnResumeState func(state string) error
}

// Stage is a point of no return in a turn.
type Stage string

const (
	// StageInjected: the prompt is in the agent's input, not yet sent.
	StageInjected Stage = "injected"
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
	ErrNotSubmitted       = errors.New("prompt pasted but not submitted")
	ErrNoReply            = errors.New("no reply")
	ErrNothingCopied      = errors.New("nothing was copied")
	ErrInputLockTimeout   = errors.New("timed out waiting for the desktop input lock")
	ErrExecFailed         = errors.New("agent command failed")
	ErrExecTimeout        = errors.New("agent command timed out")
	ErrReplyLost          = errors.New("the reply of an interrupted turn cannot be recovered")
	ErrGUIUnavailable     = errors.New("desktop control is not available in this build")
	ErrNotCalibrated      = errors.New("agent window not calibrated")
)

// Options are the parts of a driver that come from the runtime rather than
// from the agent's settings.
type Options struct {
	// LockDir holds the desktop input locks, normally <root>/locks.
	LockDir string
	// Log, if set, gets one line per step of a GUI turn, for `prompt -v`.
	Log io.Writer
}

// LockDir returns where the desktop input locks of a runtime root live.
func LockDir(root string) string { return filepath.Join(root, "locks") }

// New builds the driver an agent's settings ask for.
func New(agent config.Agent, gui config.GUI, opts Options) (Driver, error) {
	switch agent.EffectiveDriver() {
	case config.DriverExec:
		return NewExec(agent.Exec)
	case config.DriverGUI:
		return NewGUI(agent.Window, gui, opts)
	default:
		return nil, fmt.Errorf("agent %s: unknown driver %q", agent.Name, agent.Driver)
	}
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

func durationOr(d config.Duration, def time.Duration) time.Duration {
	if d > 0 {
		return d.D()
	}
	return def
}
