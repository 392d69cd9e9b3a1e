package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/mailbox"
)

// turnRecord is the runner's own bookkeeping of one claim: what it already
// did, so that a runner started after a crash does each step once. It
// travels in the claim's progress record (mailbox.Progress.Data, whose
// shape package mailbox leaves to its caller), written by record before
// the runner goes on and read back by readTurn alone.
//
// A field that is nil has not happened yet; where the zero value is a
// possible answer (an empty reply, a block not asked for, no owners found),
// the field is a pointer or a map or slice written even when empty.
type turnRecord struct {
	// Took is set once the board task of a board-task message is the
	// agent's (board_work.go).
	Took bool `json:"took,omitempty"`
	// Notes are the ids of the digest notes the turn's prompt carries,
	// recorded before the prompt is sent, so that a resumed turn carries
	// and settles the same ones (policy.go).
	Notes []string `json:"notes,omitzero"`
	// AsksBlock is whether the prompt sent asked for an agentctl block, so
	// that a resumed runner judges the reply by the prompt the agent saw,
	// not by a template edited since.
	AsksBlock *bool `json:"asks_block,omitempty"`
	// Child is the command the turn started, which a runner started after
	// a crash ends before it sends the prompt again (child.go).
	Child *cursor.Child `json:"child,omitempty"`
	// ResumeState is what the driver needs to resume the turn after a
	// crash: for a chat window, how the chat looked before the reply began.
	ResumeState string `json:"resume_state,omitempty"`
	// Handed counts the times the turn was handed to a seat on another
	// machine: each hub that died while the seat had it asked once.
	Handed int `json:"handed,omitempty"`
	// PromptBytes is the size of the prompt submitted, for a reader of the
	// log.
	PromptBytes int `json:"prompt_bytes,omitempty"`
	// DriverNotes are the driver's notes on the turn (cursor.Turn.OnNote),
	// carried into the receipt.
	DriverNotes []string `json:"driver_notes,omitempty"`
	// Reply is the reply once read back, or written by the runner itself;
	// a reply on record is never asked for again.
	Reply *string `json:"reply,omitempty"`
	// ByRunner: the reply is the runner's own, no turn was taken.
	ByRunner bool `json:"by_runner,omitempty"`
	// Owners are the owners of the tasks the reply changes, as the
	// guardrails saw them at the first plan (guardrails.go).
	Owners owners `json:"owners,omitzero"`
	// Effects are the keys of the effects applied, in the order they were,
	// and Results what each of them did, by key.
	Effects []string          `json:"effects,omitempty"`
	Results map[string]result `json:"results,omitempty"`
}

// turnVersion numbers the shape of turnRecord on disk
// (mailbox.Progress.Version). Records of version 0 were written by
// runners that kept the same keys in an untyped map; version 1 keeps their
// keys and value shapes, so that a runner of an earlier version still
// resumes a claim recorded by this one, and adds that every value has one
// type, checked when it is read.
const turnVersion = 1

// claim is a claimed message with its turn record, as the runner works it.
// Steps change turn and call record, which writes it with the progress.
type claim struct {
	*mailbox.Claim
	turn turnRecord
	// unreadable is set when the record on disk could not be read back: it
	// is then left as it is, for a person to look at, and never overwritten.
	unreadable bool
	// unaudited are the effects applied since the last record, which the
	// receipt records: they are audited once it is on disk (complete).
	unaudited []string
}

// readTurn is the one reader of a turn record: the current version, and
// the untyped records of earlier versions, which the next record rewrites
// in the current shape.
func readTurn(p mailbox.Progress) (turnRecord, error) {
	if len(p.Data) == 0 || bytes.Equal(p.Data, []byte("null")) {
		return turnRecord{}, nil
	}
	switch {
	case p.Version == 0:
		return readUntypedTurn(p.Data)
	case p.Version > turnVersion:
		return turnRecord{}, &newerTurnError{p.Version}
	case p.Version != turnVersion:
		return turnRecord{}, fmt.Errorf("it is of version %d, which no agentctl wrote", p.Version)
	}
	var t turnRecord
	if err := json.Unmarshal(p.Data, &t); err != nil {
		return turnRecord{}, err
	}
	return t, nil
}

// newerTurnError is a turn record written by a newer agentctl, which this
// one must neither guess at nor overwrite.
type newerTurnError struct{ version int }

func (e *newerTurnError) Error() string {
	return fmt.Sprintf("its turn record is of version %d, written by a newer agentctl than this one, which reads up to version %d; run that agentctl to finish it", e.version, turnVersion)
}

// readUntypedTurn reads a record of version 0: a JSON object whose values
// were read back as map[string]any, so numbers are float64 and objects
// maps. It reads each key as the runners that wrote it did: a value of
// another shape counts as missing, a list keeps its strings, and a result
// that does not decode is left out. Only the command a turn started must
// be read whole: a runner that cannot tell which command runs must not
// start another.
func readUntypedTurn(raw json.RawMessage) (turnRecord, error) {
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		return turnRecord{}, err
	}
	var t turnRecord
	t.Took = d["took"] == true
	t.Notes = untypedStrings(d["notes"])
	if v, ok := d["asks_block"]; ok {
		asks := v == true
		t.AsksBlock = &asks
	}
	if v, ok := d["child"]; ok && v != nil {
		var c cursor.Child
		if err := remarshal(v, &c); err != nil {
			return turnRecord{}, fmt.Errorf("the command an earlier runner started (%v) cannot be read back: %w", v, err)
		}
		t.Child = &c
	}
	t.ResumeState, _ = d["resume_state"].(string)
	if n, ok := d["prompt_bytes"].(float64); ok {
		t.PromptBytes = int(n)
	}
	t.DriverNotes = untypedStrings(d["driver_notes"])
	if s, ok := d["reply"].(string); ok {
		t.Reply = &s
	}
	t.ByRunner = d["by_runner"] == true
	if m, ok := d["owners"].(map[string]any); ok {
		t.Owners = owners{}
		for task, owner := range m {
			if s, ok := owner.(string); ok {
				t.Owners[task] = s
			}
		}
	}
	t.Effects = untypedStrings(d["effects"])
	if m, ok := d["results"].(map[string]any); ok {
		t.Results = map[string]result{}
		for key, v := range m {
			var res result
			if remarshal(v, &res) == nil {
				t.Results[key] = res
			}
		}
	}
	return t, nil
}

// untypedStrings keeps the strings of a list read back as []any; it is
// nil for anything but a list, and empty, not nil, for a list of none.
func untypedStrings(v any) []string {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	out := []string{}
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func remarshal(v, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// save puts the turn record in the claim's progress, in the current shape,
// for the next record of the claim to write.
func (cl *claim) save() error {
	if cl.unreadable {
		return nil
	}
	data, err := json.Marshal(cl.turn)
	if err != nil {
		return fmt.Errorf("cannot record the turn of %s: %w", cl.Message.ID, err)
	}
	cl.Progress.Data, cl.Progress.Version = data, turnVersion
	return nil
}

// record marks that the claim reached stage, with its turn record as it is
// now, before the runner goes on.
func (r *Runner) record(cl *claim, stage string, now time.Time) error {
	if err := cl.save(); err != nil {
		return err
	}
	if err := r.c.Record(cl.Claim, stage, now); err != nil {
		return &recordError{err}
	}
	return nil
}

// recordUnsynced is record for a stage an earlier record implies, which a
// power cut may take (mailbox.Consumer.RecordUnsynced).
func (r *Runner) recordUnsynced(cl *claim, stage string, now time.Time) error {
	if err := cl.save(); err != nil {
		return err
	}
	if err := r.c.RecordUnsynced(cl.Claim, stage, now); err != nil {
		return &recordError{err}
	}
	return nil
}

// recordError is a stage of a turn that its runner could not put on
// record: handed back through the driver, it tells a turn cut off by the
// runtime from one that failed on its own (Runner.failed).
type recordError struct{ err error }

func (e *recordError) Error() string { return e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }

// complete archives the claim with its receipt; the last record keeps the
// turn record too, so the archived log tells the whole turn, and the
// effects applied since the record before it are audited once it is on
// disk, before the message is archived. A receipt whose sync failed may
// still be read back after a crash, and recovery archives its message:
// their audit lines are then lost, as the audit log allows, never written
// twice.
func (r *Runner) complete(cl *claim, rc mailbox.Receipt, now time.Time) error {
	if err := cl.save(); err != nil {
		return err
	}
	if err := r.c.Commit(cl.Claim, rc, now); err != nil {
		return err
	}
	if len(cl.unaudited) > 0 {
		log := r.log.With().Str("id", cl.Message.ID).Logger()
		for _, key := range cl.unaudited {
			r.audit(log, cl.Message, key, cl.turn.Results[key])
		}
		cl.unaudited = nil
	}
	return r.c.Archive(cl.Claim)
}

// deadletterClaim moves the claim to deadletter/ with reason.
func (r *Runner) deadletterClaim(cl *claim, reason string, now time.Time) error {
	if err := cl.save(); err != nil {
		return err
	}
	return r.c.Deadletter(cl.Claim, reason, now)
}

// asksBlock reports whether the prompt sent asked for an agentctl block.
func (t turnRecord) asksBlock() bool { return t.AsksBlock != nil && *t.AsksBlock }
