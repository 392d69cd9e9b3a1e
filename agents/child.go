package agents

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/mailbox"
)

// A turn's command, once started, is recorded (turnRecord.Child) with
// stage stageStarted, so that a runner started after a crash can end it
// before it runs the prompt again. A started command has the prompt: the
// claim counts as submitted from then on.
const stageStarted = "started"

// promptDelivered reports whether the claim's prompt may already be with the
// agent, so that a retry must resume (or, with run.resend, knowingly
// resend) rather than send it as new: it was submitted, its command
// started, or the key that sends it was pressed.
func promptDelivered(p mailbox.Progress) bool {
	_, sent := p.Stages[stageSubmit]
	_, started := p.Stages[stageStarted]
	_, pressed := p.Stages[stagePressed]
	return sent || started || pressed
}

// promptMayBeDelivered is promptDelivered for a turn that failed with
// cause: a driver that pressed the send key and then saw the prompt still
// in the agent's input says so with cursor.ErrNotSubmitted.
func promptMayBeDelivered(p mailbox.Progress, cause error) bool {
	if cursor.ProvenUnsent(cause) {
		_, sent := p.Stages[stageSubmit]
		return sent
	}
	return promptDelivered(p)
}

// submittedWords says how far a claim's prompt got, for a reason.
func submittedWords(p mailbox.Progress) string {
	if _, sent := p.Stages[stageSubmit]; sent {
		return "the prompt was submitted"
	}
	if _, started := p.Stages[stageStarted]; started {
		return "the prompt's command started"
	}
	return "the prompt may have been submitted (its send key was pressed)"
}

// recordChild is the Turn.OnStart of a claim: the command is on record
// before the turn goes on.
func (r *Runner) recordChild(cl *claim) func(cursor.Child) error {
	return func(c cursor.Child) error {
		cl.turn.Child = &c
		return r.record(cl, stageStarted, r.now())
	}
}

// endRecordedChild ends the command an earlier runner started for this
// claim's turn, if anything of it still runs, and returns only once it is
// gone: a prompt never runs twice at once. A command that cannot be ended
// makes the message dead: running the prompt beside it would do the work
// twice.
func (r *Runner) endRecordedChild(log zerolog.Logger, cl *claim) error {
	if cl.turn.Child == nil {
		return nil
	}
	c := *cl.turn.Child
	ended, err := cursor.EndChild(c)
	if err != nil {
		return &deadError{fmt.Sprintf("the command an earlier runner started for it (pid %d) could not be ended: %v; it was not sent again, to avoid running it twice at once", c.PID, err)}
	}
	if ended {
		log.Warn().Str("event", "ended-leftover").Int("pid", c.PID).Int("pgid", c.PGID).
			Msg("ended the command an earlier runner left at work on this prompt")
	}
	return nil
}
