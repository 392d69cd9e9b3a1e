package actions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// Replied is a person's answer to a message in their mailbox.
type Replied struct {
	Answer mailbox.Message
	// SentBefore: an earlier reply that stopped half-way had delivered the
	// answer; this text was not sent, and the question is now archived.
	SentBefore bool
	// Settled: the question is archived as answered. Answer leaves the
	// one in flight to its runner.
	Settled bool
}

// Reply answers message id waiting in the mailbox of person as (the person
// in the loop when empty) with text, and archives the question.
func (rt Runtime) Reply(ctx context.Context, as, id, text string) (Replied, error) {
	if strings.TrimSpace(text) == "" {
		return Replied{}, inputError("reply: no answer text", "")
	}
	if as == "" {
		as = rt.Config.Human()
	}
	person, err := rt.ResolvePerson(as)
	if err != nil {
		return Replied{}, err
	}
	return rt.answer(ctx, person, id, text, false)
}

// Answer answers message id in agent's own mailbox with text, as Reply
// does for a person: the answer goes to its sender in its thread, from the
// agent, once per question. A question still pending is archived as
// answered; the one in flight is the turn of the agent's runner, which
// settles it when the turn ends, so it stays where it is.
func (rt Runtime) Answer(ctx context.Context, agent, id, text string) (Replied, error) {
	if strings.TrimSpace(text) == "" {
		return Replied{}, inputError("reply: no answer text", "")
	}
	who, err := rt.ResolveAgent(agent)
	if err != nil {
		return Replied{}, err
	}
	return rt.answer(ctx, who, id, text, true)
}

// answer is Reply and Answer once the mailbox's owner is known; inFlight
// lets the question be the one its runner is working on. It holds the
// mailbox's by-hand lock throughout, so that of two answers at once the
// second finds the question answered.
func (rt Runtime) answer(ctx context.Context, owner, id, text string, inFlight bool) (Replied, error) {
	mb, err := rt.OpenMailbox(owner)
	if err != nil {
		return Replied{}, err
	}
	release, err := mb.LockByHand(ctx)
	if err != nil {
		return Replied{}, err
	}
	defer release()
	now := rt.now().UTC()
	if err := intake.Idle(mb, AdminOptions(rt.Config), IntakeOptions(rt.Config), now); err != nil {
		return Replied{}, err
	}
	question, err := waitingFor(mb, id, inFlight)
	if err != nil {
		return Replied{}, err
	}
	msg := question.Message
	asker, err := agentname.Resolve(rt.Config.MailboxNames(), msg.From)
	if err != nil {
		return Replied{}, WithHint(fmt.Errorf("cannot reply to %s: its sender %q has no mailbox in this runtime", id, msg.From),
			fmt.Sprintf("to settle it without an answer: agentctl drop %s --reason ...", id))
	}
	to, err := rt.OpenMailbox(asker)
	if err != nil {
		return Replied{}, err
	}
	subject := msg.Subject
	if subject != "" && !strings.HasPrefix(strings.ToLower(subject), "re:") {
		subject = "Re: " + subject
	}
	answer := mailbox.Message{
		ID: answerID(msg.ID), From: owner, To: to.Agent, Type: "answer", Priority: msg.Priority,
		Subject: subject, Body: text, CreatedAt: now, ReplyTo: msg.ID, ThreadID: msg.Thread(), TaskID: msg.TaskID,
	}
	err = to.Deliver(answer)
	before := errors.Is(err, mailbox.ErrDuplicate)
	if err != nil && !before {
		return Replied{Answer: answer}, fmt.Errorf("cannot send the answer: %w", err)
	}
	// An answer already delivered while the question still waits means an
	// earlier reply stopped half-way: finish it, without a second answer.
	data, err := receipt.Encode(receipt.Data{ReplyID: answer.ID, To: to.Agent})
	if err != nil {
		return Replied{answer, before, false}, err
	}
	if question.State != mailbox.StatePending {
		if before {
			return Replied{answer, before, false}, WithHint(fmt.Errorf("%s was answered already (answer %s); a second answer would be a duplicate", id, answer.ID),
				fmt.Sprintf("to add something, write to its sender: agentctl send --to %s --reply-to %s TEXT", dash(msg.From), id))
		}
		return Replied{answer, before, false}, nil // its runner settles it
	}
	rc := mailbox.Receipt{Outcome: "answered", Reply: text, Data: data}
	if before {
		rc.Reply = ""
	}
	err = mb.Settle(question, rc, now)
	if errors.Is(err, mailbox.ErrMoved) && inFlight {
		return Replied{answer, before, false}, nil // its runner claimed it meanwhile, and settles it
	}
	if err != nil {
		return Replied{answer, before, false}, fmt.Errorf("the answer %s was sent, but the question could not be archived: %w", answer.ID, err)
	}
	return Replied{answer, before, true}, nil
}

// answerID is the id of a person's answer to message id: one answer per
// question, so a second one is a duplicate the mailbox refuses.
func answerID(id string) string {
	sum := sha256.Sum256([]byte("answer\x00" + id))
	return "msg_" + hex.EncodeToString(sum[:])[:24]
}

// PendingFor finds message id waiting in mb's inbox, or says where it is
// instead.
func PendingFor(mb *mailbox.Mailbox, id string) (mailbox.Entry, error) {
	return waitingFor(mb, id, false)
}

// waitingFor is PendingFor that, with inFlight, also accepts the message
// a runner is working on.
func waitingFor(mb *mailbox.Mailbox, id string, inFlight bool) (mailbox.Entry, error) {
	found, err := mb.Locate(id)
	if err != nil {
		return mailbox.Entry{}, err
	}
	for _, e := range found {
		if e.State == mailbox.StatePending || (inFlight && e.State == mailbox.StateProcessing) {
			return e, nil
		}
	}
	for _, e := range found {
		if e.State == mailbox.StateDone && e.Receipt != nil && e.Receipt.Outcome == "answered" {
			return mailbox.Entry{}, WithHint(fmt.Errorf("%s was answered already (answer %v); a second answer would be a duplicate", id, answerOf(e.Receipt)),
				fmt.Sprintf("to add something, write to its sender: agentctl send --to %s --reply-to %s TEXT", dash(e.Message.From), id))
		}
		if e.State != mailbox.StatePending {
			return mailbox.Entry{}, fmt.Errorf("%s is not waiting in %s's inbox: it is %s (%s)", id, mb.Agent, e.State, e.File)
		}
	}
	return mailbox.Entry{}, WithHint(fmt.Errorf("no message %s in %s's mailbox", id, mb.Agent), "list what waits with 'agentctl inbox "+mb.Agent+"'")
}

// dash stands for an empty value in a sentence.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// answerOf is the id of the answer a receipt of agentctl reply names.
func answerOf(r *mailbox.Receipt) string {
	d, err := receipt.Read(r)
	if err != nil || d.ReplyID == "" {
		return "unknown"
	}
	return d.ReplyID
}
