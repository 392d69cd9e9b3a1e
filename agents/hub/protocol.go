package hub

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/agentctl/agentctl/agents/hub/hubseats"
	"github.com/agentctl/agentctl/cursor"
)

// The streams and subjects of the swarm. Agent names are valid subject
// tokens (internal/agentname allows letters, digits, '-' and '_' only).
const (
	// TurnsStream holds asks, hub → seat, on agentctl.turn.AGENT; a seat's
	// durable consumer takes them one at a time.
	TurnsStream = "AGENTCTL_TURNS"
	// RepliesStream holds answers, seat → hub, on agentctl.reply.AGENT.
	RepliesStream = "AGENTCTL_REPLIES"
	// DeliverStream holds messages dropped into mailboxes on other
	// machines, on their way to the hub's, on agentctl.deliver.TO.FROM:
	// the sender is in the subject, so that the server's permissions keep
	// a machine to sending as its own agents.
	DeliverStream = "AGENTCTL_DELIVER"
)

func turnSubject(agent string) string       { return "agentctl.turn." + agent }
func replySubject(agent string) string      { return "agentctl.reply." + agent }
func deliverSubject(to, from string) string { return "agentctl.deliver." + to + "." + from }

// Core NATS subjects: what may be missed without harm, because the streams
// carry the facts and these only make them visible sooner.
func stageSubject(agent string) string  { return "agentctl.stage." + agent }
func answerSubject(agent string) string { return "agentctl.answer." + agent }
func cancelSubject(agent string) string { return "agentctl.cancel." + agent }
func beatSubject(agent string) string   { return "agentctl.seat." + agent }

// Ask is one request of the hub for the reply of a turn. Every resume of a
// turn keeps its Turn id and gets a new Ask id, so that a hub restarted
// after JetStream's duplicate window can still ask, and the seat answers
// each ask from its journal without taking the turn twice.
type Ask struct {
	Turn    string    `json:"turn"`
	Ask     string    `json:"ask"`
	Prompt  string    `json:"prompt"`
	NewChat bool      `json:"new_chat,omitempty"`
	Thread  string    `json:"thread,omitempty"`
	Resume  bool      `json:"resume,omitempty"`
	AskedAt time.Time `json:"asked_at"`
}

// Answer is a seat's answer to an ask: the reply, or why there is none.
type Answer struct {
	Turn  string `json:"turn"`
	Ask   string `json:"ask"`
	Reply string `json:"reply,omitempty"`
	Error string `json:"error,omitempty"`
	// Kind names the driver's error (errorKinds) so the hub's runner
	// judges it as it would judge its own driver's.
	Kind string `json:"kind,omitempty"`
	// Failure is what the seat read from a failed command's output (a
	// model API's refusal), so the hub's runner waits or stops as it
	// would for its own.
	Failure *cursor.Failure `json:"failure,omitempty"`
	// Usage is what the turn used, as the seat's driver heard it, so
	// that the hub's runner records its cost as it does its own seats'.
	Usage *cursor.Usage `json:"usage,omitempty"`
	// Submitted says the agent may have the prompt: a retry must not send
	// it as new. OnlyPressed says no more is known than that the key that
	// sends it was pressed, which the hub's runner records as such (seats
	// of earlier releases, without it, said submitted).
	Submitted   bool      `json:"submitted,omitempty"`
	OnlyPressed bool      `json:"only_pressed,omitempty"`
	Machine     string    `json:"machine"`
	At          time.Time `json:"at"`
}

// stage is how far the answer says the prompt got: StagePressed when
// only the key that sends it is known to have gone (a seat of an earlier
// release says so only by its error), StageSubmitted when the agent may
// have it otherwise, "" when it does not.
func (a Answer) stage() cursor.Stage {
	switch {
	case !a.Submitted:
		return ""
	case a.OnlyPressed || a.Error != "" && errors.Is(a.err(), cursor.ErrSubmitUnknown):
		return cursor.StagePressed
	}
	return cursor.StageSubmitted
}

// answerTaken is the hub's word to a seat's answer sent over core NATS
// (answerSubject) that the runner waiting for the turn has it; any other
// word, or none, and the seat sends it through the replies stream.
const answerTaken = "taken"

// Stage tells the hub, as it happens, that a turn passed a stage.
type Stage struct {
	Turn  string `json:"turn"`
	Stage string `json:"stage"`
}

// Cancel asks the seat to stop the turn the hub no longer waits for (a
// person skipped it, the hub is stopping).
type Cancel struct {
	Turn string `json:"turn"`
	// Ask is the ask of the turn the hub gave up on. A cancel can reach
	// the seat before that ask does (they come by different ways), so the
	// seat keeps it and drops the ask when it comes; a cancel without it
	// (an older hub) stops only a turn already begun.
	Ask string `json:"ask,omitempty"`
}

// Beat is a seat's heartbeat (package hubseats).
type Beat = hubseats.Beat

// errorKinds are the driver errors a seat names in an answer.
var errorKinds = map[string]error{
	"window_not_found":     cursor.ErrWindowNotFound,
	"window_not_confirmed": cursor.ErrWindowNotConfirmed,
	"not_submitted":        cursor.ErrNotSubmitted,
	"submit_unknown":       cursor.ErrSubmitUnknown,
	"prompt_refused":       cursor.ErrPromptRefused,
	"no_reply":             cursor.ErrNoReply,
	"nothing_copied":       cursor.ErrNothingCopied,
	"input_lock_timeout":   cursor.ErrInputLockTimeout,
	"exec_failed":          cursor.ErrExecFailed,
	"exec_timeout":         cursor.ErrExecTimeout,
	"reply_lost":           cursor.ErrReplyLost,
	"prompt_stopped":       cursor.ErrPromptStopped,
	"gui_unavailable":      cursor.ErrGUIUnavailable,
	"not_calibrated":       cursor.ErrNotCalibrated,
	"bad_output":           cursor.ErrBadOutput,
}

// kindOf names err's driver error, "" when it is none of them. An error
// that is two of them is named the same every time, an unsure submission
// before anything else: it says the agent may have the prompt.
func kindOf(err error) string {
	if errors.Is(err, cursor.ErrSubmitUnknown) {
		return "submit_unknown"
	}
	for _, k := range slices.Sorted(maps.Keys(errorKinds)) {
		if errors.Is(err, errorKinds[k]) {
			return k
		}
	}
	return "failed"
}

// SeatError is a turn that failed on the seat, as the hub's runner sees it:
// it wraps the driver error the seat named, so errors.Is works across the
// network.
type SeatError struct {
	Machine string
	Msg     string
	kind    error
}

func (e *SeatError) Error() string { return fmt.Sprintf("on %s: %s", e.Machine, e.Msg) }
func (e *SeatError) Unwrap() error { return e.kind }

// err turns a failed answer back into an error; nil for a reply.
func (a Answer) err() error {
	if a.Error == "" {
		return nil
	}
	err := error(&SeatError{Machine: a.Machine, Msg: a.Error, kind: errorKinds[a.Kind]})
	if a.Failure != nil {
		err = cursor.WithFailure(err, *a.Failure)
	}
	return err
}

// newAskID is a turn's id plus what makes this ask of it unique.
func newAskID(turn string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return turn + "@" + hex.EncodeToString(b[:])
}
