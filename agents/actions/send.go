package actions

import (
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
}

// Send delivers d to its recipient, or to every agent but the sender for
// "all", and returns what it delivered, also when a later recipient fails.
func (rt Runtime) Send(d Draft) ([]mailbox.Message, error) {
	cfg := rt.Config
	if d.Type == "" {
		d.Type = "message"
	}
	if d.From == "" {
		d.From = cfg.Human()
	}
	prio, err := mailbox.ParsePriority(d.Priority)
	if err != nil {
		return nil, inputError(err.Error(), "")
	}
	if err := agentname.Valid(d.From); err != nil {
		return nil, inputError("--from: "+err.Error(), "")
	}
	if strings.TrimSpace(d.Body) == "" {
		return nil, inputError("send: no message text", `give the text as arguments, or "-" to read it from stdin`)
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
	now := rt.now().UTC()
	var sent []mailbox.Message
	for _, r := range recipients {
		mb, err := rt.OpenMailbox(r)
		if err != nil {
			return sent, err
		}
		msg := mailbox.Message{
			ID: mailbox.NewID(now), From: d.From, To: mb.Agent, Type: d.Type, Priority: prio,
			Subject: d.Subject, Body: d.Body, CreatedAt: now, ReplyTo: d.ReplyTo, TaskID: d.TaskID,
			RequiresAck: d.Ack,
		}
		if err := mb.Deliver(msg); err != nil {
			return sent, fmt.Errorf("cannot send: %w", err)
		}
		sent = append(sent, msg)
	}
	return sent, nil
}
