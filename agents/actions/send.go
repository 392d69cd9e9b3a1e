package actions

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/mailbox"
)

// Draft is a message a person writes, as send's flags or mission control's
// form give it.
type Draft struct {
	// To is a recipient, or "all": every agent but the sender.
	To, From, Type, Priority, Subject, Body, ReplyTo, TaskID string
	// Ack asks for a receipt message once the message is done or dead.
	Ack bool
	// IDFor, when set, names the message to each recipient instead of a
	// new id: a send that must deliver once however often it is asked
	// (agentctl mcp's idempotency keys) asks again with the same names,
	// and the mailbox refuses an id it has seen.
	IDFor func(recipient string) string
}

// Sent is what Send delivered: the messages, and for a Draft with IDFor,
// whether every one of them had been delivered before.
type Sent struct {
	Messages []mailbox.Message
	Before   bool
}

// Send delivers d to its recipient, or to every agent but the sender for
// "all", and returns what it delivered, also when a later recipient fails.
func (rt Runtime) Send(d Draft) ([]mailbox.Message, error) {
	s, err := rt.SendOnce(d)
	return s.Messages, err
}

// SendOnce is Send that also says whether a Draft with IDFor had been
// delivered before: a message whose id the mailbox has seen counts as
// sent, by the earlier call.
func (rt Runtime) SendOnce(d Draft) (Sent, error) {
	cfg := rt.Config
	if d.Type == "" {
		d.Type = "message"
	}
	if d.From == "" {
		d.From = cfg.Human()
	}
	prio, err := mailbox.ParsePriority(d.Priority)
	if err != nil {
		return Sent{}, inputError(err.Error(), "")
	}
	if err := agentname.Valid(d.From); err != nil {
		return Sent{}, inputError("--from: "+err.Error(), "")
	}
	if strings.TrimSpace(d.Body) == "" {
		return Sent{}, inputError("send: no message text", `give the text as arguments, or "-" to read it from stdin`)
	}
	recipients := []string{d.To}
	if strings.EqualFold(d.To, "all") {
		recipients = recipients[:0]
		for _, a := range cfg.AgentNames() {
			if !strings.EqualFold(a, d.From) {
				recipients = append(recipients, a)
			}
		}
	}
	if len(recipients) == 0 {
		return Sent{}, WithHint(fmt.Errorf("send --to all: there is no agent but %s to send to", d.From), "add agents to agentctl.yaml, or name the recipient")
	}
	// Every mailbox first: a recipient missing half-way would leave the
	// message with some and not others, and sending again would give the
	// first ones a second copy.
	boxes := make([]*mailbox.Mailbox, len(recipients))
	var missing []string
	var first error
	for i, r := range recipients {
		if boxes[i], err = rt.OpenMailbox(r); err != nil {
			missing = append(missing, r)
			first = cmp.Or(first, err)
		}
	}
	switch {
	case len(missing) == 0:
	case len(recipients) == 1:
		return Sent{}, first
	case len(missing) == 1:
		return Sent{}, fmt.Errorf("nothing was sent: %w", first)
	default:
		return Sent{}, WithHint(fmt.Errorf("nothing was sent: %s have no mailbox", strings.Join(missing, ", ")),
			"run 'agentctl init' to create the mailboxes of the configured agents")
	}
	now := rt.now().UTC()
	sent := Sent{Before: d.IDFor != nil}
	for _, mb := range boxes {
		id := mailbox.NewID(now)
		if d.IDFor != nil {
			id = d.IDFor(mb.Agent)
		}
		msg := mailbox.Message{
			ID: id, From: d.From, To: mb.Agent, Type: d.Type, Priority: prio,
			Subject: d.Subject, Body: d.Body, CreatedAt: now, ReplyTo: d.ReplyTo, TaskID: d.TaskID,
			RequiresAck: d.Ack,
		}
		err = mb.Deliver(msg)
		before := d.IDFor != nil && errors.Is(err, mailbox.ErrDuplicate)
		if err != nil && !before {
			return sent, fmt.Errorf("cannot send: %w", err)
		}
		sent.Before = sent.Before && before
		sent.Messages = append(sent.Messages, msg)
	}
	sent.Before = sent.Before && len(sent.Messages) > 0
	return sent, nil
}
