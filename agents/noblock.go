package agents

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/agentctl/agentctl/mailbox"
)

// DefaultNoBlockNotice is how many turns in a row may end "done without
// block" before the person in the loop is told.
const DefaultNoBlockNotice = 3

// nextNoBlock is the run of turns without a block after one more message
// settled as o, and whether the person is to be told now. A reply without
// the block its prompt asked for lengthens the run; a reply with a block
// or a report, even one refused, ends it; a message the runner handled
// itself, or a turn whose prompt did not ask for the block, leaves it as
// it is. The person is told when the run reaches after (0: never), so once
// per run, however long it grows.
func nextNoBlock(run mailbox.Streak, o outcome, id string, after int) (next mailbox.Streak, tell bool) {
	switch {
	case o.ByRunner:
		return run, false
	case o.NoBlock:
		if run.Turns == 0 {
			run.First = id
		}
		run.Turns++
		return run, after > 0 && run.Turns == after
	case o.Answered:
		return mailbox.Streak{}, false
	}
	return run, false
}

// noteNoBlock keeps the run of turns without a block and tells the person
// when it is long enough. The notice goes before status.json is written,
// and its id comes from the run's first message: a runner stopped in
// between counts the run again, and delivering the notice again is
// refused as a duplicate.
func (r *Runner) noteNoBlock(log zerolog.Logger, msg mailbox.Message, o outcome) error {
	run, tell := nextNoBlock(r.hb.noBlock(), o, msg.ID, r.s.NoBlockNotice)
	if tell {
		r.tellNoBlock(log, run, msg)
	}
	return r.hb.setNoBlock(run)
}

// tellNoBlock puts one notice in the person's mailbox through the path of
// the stall notices. A notice that cannot be delivered is logged: the
// receipts still say what happened.
func (r *Runner) tellNoBlock(log zerolog.Logger, run mailbox.Streak, last mailbox.Message) {
	agent := r.s.Agent
	log = log.With().Str("event", "no-block").Int("turns", run.Turns).Str("first", run.First).Logger()
	if r.s.Human == "" {
		log.Warn().Msgf("%d replies in a row had no agentctl block; no person is configured to tell", run.Turns)
		return
	}
	n := mailbox.Message{
		ID: derivedID("no-block", agent, run.First), From: "agentctl", To: r.s.Human, Type: "recovery", Priority: mailbox.High,
		Subject:   fmt.Sprintf("%s: %d replies in a row without the agentctl block", agent, run.Turns),
		Body:      noBlockBody(agent, run, last.ID),
		CreatedAt: r.now().UTC(),
		Meta:      map[string]any{"agent": agent, "turns": run.Turns, "first": run.First, "last": last.ID},
	}
	fresh, err := deliver(r.s.Root, n)
	if err != nil {
		log.Warn().Err(err).Str("to", r.s.Human).Msg("cannot tell the person that replies come without the agentctl block")
		return
	}
	log.Warn().Str("to", r.s.Human).Str("sent_id", n.ID).Bool("fresh", fresh).Msgf("%d replies in a row had no agentctl block; told %s", run.Turns, r.s.Human)
}

func noBlockBody(agent string, run mailbox.Streak, last string) string {
	return fmt.Sprintf(`The last %d replies of %s (from %s to %s) had no agentctl block, though their prompts asked for one, so nothing they meant to send or change was done. They are archived "done without block" (agentctl inbox %s --state done).

Likely causes:
- The reply is read from the chat's rendering, which loses Markdown: the fence of the block is gone. Give the seat its copy button (cdp.copy for a page, window.copy for a chat window; agentctl calibrate) so the reply's Markdown source is read.
- The agent ignores the reply protocol: its template or chat rules keep it from ending with the block.

What to check:
- agentctl doctor: does the seat's copy selector match?
- agentctl inbox %s --state done --json: each reply as the runner read it, and the driver's notes (driver_notes) when it was read from the rendering.
- The prompt template (run.templates): does it still carry the protocol?

You are told once; the next reply with a block ends the run.`, run.Turns, agent, run.First, last, agent, agent)
}
