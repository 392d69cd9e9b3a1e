package intake

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/dreamos"
)

// A message whose recipient names several agents or none ("Agent-1 and
// Agent-2", "the QA lead", nothing at all) is not guessed at, nor
// dead-lettered where no one looks: it goes to the person who routes by
// hand (Options.Human) as a review item that says why and quotes it whole,
// as migrate does with those it finds. One intake makes it: for a shared
// place the one with Options.SharedDeadletters (the others leave what is
// no agent's alone), for an agent's own places that agent's. Its id comes
// from the original's, so that a review made again (after a crash, before
// the place was remembered as read; or by a second runner watching the
// same file) is a duplicate and the person sees it once.

// UnclearRecipient says why a message addressed to "to" can be delivered
// to no one agent of agents (and is no person's of people), or "" when
// its recipient is clear: one agent (perhaps not configured), a person, or
// a broadcast.
func UnclearRecipient(to string, agents, people []string) string {
	if to == "" {
		return "neither the message nor where it sat says whom it is for"
	}
	if _, err := agentname.Resolve(agents, to); err == nil || to == "all" {
		return ""
	}
	switch named := dreamos.AgentsNamed(to); {
	case len(named) > 1:
		return fmt.Sprintf("addressed to %q, which names %d agents (%s): which one is meant is not for agentctl to pick", to, len(named), strings.Join(named, ", "))
	case len(named) == 0 && !slices.ContainsFunc(people, func(p string) bool { return strings.EqualFold(p, to) }):
		return fmt.Sprintf("addressed to %q, which names no agent", to)
	}
	return ""
}

// Review is the message that puts msg, whose recipient is unclear for the
// reason why, before the person human: from agentctl, saying who did not
// deliver it (by) and why, and quoting it whole with where it was found.
func Review(msg mailbox.Message, origin, why, human, by string) mailbox.Message {
	original, _ := json.MarshalIndent(msg, "> ", "  ")
	return mailbox.Message{
		ID:   "review-" + msg.ID,
		From: "agentctl", To: human, Type: "review",
		Priority:  msg.Priority,
		Subject:   "Dream.OS message to route by hand: " + cmp.Or(msg.Subject, firstLine(msg.Body), msg.ID),
		Body:      fmt.Sprintf("%s did not deliver this message from %s: %s.\nSend it on with 'agentctl send --to AGENT', or leave it.\n\nOriginal (%s):\n\n> %s\n", by, msg.From, why, origin, original),
		CreatedAt: msg.CreatedAt,
		Meta:      map[string]any{"review_reason": why, "original_to": msg.To, "original_id": msg.ID},
	}
}

// firstLine is the start of a text, short enough for a subject.
func firstLine(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 60 {
		line = string(r[:60]) + "…"
	}
	return line
}

// unclearError is the verdict on a message whose recipient is unclear:
// a review item for the person, not a dead letter.
type unclearError struct {
	msg mailbox.Message
	why string
	err error // what a dead letter says, with no person to review it
}

func (e *unclearError) Error() string { return e.err.Error() }

// unclear makes err an unclearError when msg's recipient is unclear and
// the old system had not handled it already (that is a dead letter, as it
// is for every message it had handled).
func (in *Intake) unclear(msg mailbox.Message, err error) error {
	if err == nil || HandledStatus(msg) != "" {
		return err
	}
	if why := UnclearRecipient(msg.To, in.store.Known, in.opts.People); why != "" {
		return &unclearError{msg: msg, why: why, err: err}
	}
	return err
}

// refuse deals with what cannot be delivered: a message whose recipient
// is unclear goes to the person as a review item, when there is one to
// review it; anything else, and that with no person, is dead-lettered as
// l says.
func (in *Intake) refuse(l mailbox.Letter, err error, now time.Time) error {
	if h := (*handled)(nil); errors.As(err, &h) && h.id != "" {
		// Handled, and here already (migrate kept it as history, or it
		// was dead-lettered before): one place is enough. Otherwise its
		// id is marked seen, so that migrate, run later, finds it here.
		if in.mb.Seen(h.id) {
			in.emit("duplicate", h.id, l.Origin, err.Error()+", and this mailbox has it already")
			return nil
		}
		l.ID, l.Seen = h.id, true
	}
	var u *unclearError
	if !errors.As(err, &u) || in.opts.Human == "" {
		l.Reason = err.Error()
		return in.deadletter(l, now)
	}
	r := Review(u.msg, l.Origin, u.why, in.opts.Human, "The runner watching the old writers' places")
	r.Meta["found_in"] = l.Origin
	mb, oerr := mailbox.Open(in.mb.Root, in.opts.Human)
	if oerr == nil {
		oerr = mb.Deliver(r)
	}
	switch {
	case errors.Is(oerr, mailbox.ErrDuplicate):
		return nil // made before: the person sees it once
	case oerr != nil:
		return fmt.Errorf("cannot put %s before %s for review: %w", l.Origin, in.opts.Human, oerr)
	}
	in.emit("review", r.ID, l.Origin, u.why)
	return nil
}
