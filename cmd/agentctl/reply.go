package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

const replyUsage = `
Usage: agentctl reply ID [TEXT | -] [--as NAME]

Answers message ID waiting in a person's mailbox (human's, or NAME's with
--as): the answer goes into the inbox of whoever sent ID, in the same
thread (reply_to is ID, thread_id and task_id are kept), from the person.
The question is then archived with a receipt whose outcome is "answered"
and which names the answer. TEXT is the answer; "-" reads it from stdin.

A message is answered once: the answer's id comes from ID, so a second
reply to the same ID is refused.

Examples:
  agentctl inbox human
  agentctl reply msg_20261122_101500_1a2b3c4d5e6f "Rebase on main, not release."
  git diff | agentctl reply msg_20261122_101500_1a2b3c4d5e6f -
  agentctl reply --as alice msg_20261122_101500_1a2b3c4d5e6f "Approved."
`

func runReply(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "reply", replyUsage)
	as := fs.String("as", "human", "the `person` whose mailbox holds the message")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, rest, 1, -1, "ID and the answer's TEXT (or -)"); err != nil {
		return err
	}
	id := rest[0]
	text, err := messageText(env, "reply", rest[1:])
	if err != nil {
		return err
	}
	cfg, err := loadConfig(env)
	if err != nil {
		return err
	}
	answer, sentBefore, err := replyAs(env, cfg, *as, id, text)
	if err != nil {
		return err
	}
	if sentBefore {
		fmt.Fprintf(env.Stderr, "note: %s was answered before (%s); this text was not sent, and the question is now archived\n", id, answer.ID)
		return nil
	}
	fmt.Fprintln(env.Stdout, answer.ID)
	return nil
}

// replyAs answers message id waiting in person's mailbox with text and
// archives the question. sentBefore reports an answer delivered by an
// earlier reply that stopped half-way: this text was not sent.
func replyAs(env *Env, cfg config.Config, as, id, text string) (answer mailbox.Message, sentBefore bool, err error) {
	person, err := resolvePerson(env, cfg, as)
	if err != nil {
		return answer, false, err
	}
	mb, err := openMailbox(env, cfg, person)
	if err != nil {
		return answer, false, err
	}
	now := time.Now().UTC()
	if err := intake.Idle(mb, adminOptions(cfg), intakeOptions(cfg), now); err != nil {
		return answer, false, err
	}
	question, err := pendingFor(mb, id)
	if err != nil {
		return answer, false, err
	}
	msg := question.Message
	asker, err := agentname.Resolve(cfg.MailboxNames(), msg.From)
	if err != nil {
		return answer, false, withHint(fmt.Errorf("cannot reply to %s: its sender %q has no mailbox in this runtime", id, msg.From),
			fmt.Sprintf("to settle it without an answer: agentctl drop %s --reason ...", id))
	}
	to, err := openMailbox(env, cfg, asker)
	if err != nil {
		return answer, false, err
	}
	thread := msg.Thread()
	subject := msg.Subject
	if subject != "" && !strings.HasPrefix(strings.ToLower(subject), "re:") {
		subject = "Re: " + subject
	}
	answer = mailbox.Message{
		ID: answerID(msg.ID), From: person, To: to.Agent, Type: "answer", Priority: msg.Priority,
		Subject: subject, Body: text, CreatedAt: now, ReplyTo: msg.ID, ThreadID: thread, TaskID: msg.TaskID,
	}
	err = to.Deliver(answer)
	sentBefore = errors.Is(err, mailbox.ErrDuplicate)
	if err != nil && !sentBefore {
		return answer, false, fmt.Errorf("cannot send the answer: %w", err)
	}
	// An answer already delivered while the question still waits means an
	// earlier reply stopped half-way: finish it, without a second answer.
	receipt := mailbox.Receipt{Outcome: "answered", Reply: text, Data: map[string]any{"reply_id": answer.ID, "to": to.Agent}}
	if sentBefore {
		receipt.Reply = ""
	}
	if err := mb.Settle(question, receipt, now); err != nil {
		return answer, sentBefore, fmt.Errorf("the answer %s was sent, but the question stays in %s's inbox: %w", answer.ID, person, err)
	}
	return answer, sentBefore, nil
}

// answerID is the id of a person's answer to message id: one answer per
// question, so a second one is a duplicate the mailbox refuses.
func answerID(id string) string {
	sum := sha256.Sum256([]byte("answer\x00" + id))
	return "msg_" + hex.EncodeToString(sum[:])[:24]
}

// resolvePerson resolves a user-typed person's name; an agent's name gets
// an error saying how to write to agents.
func resolvePerson(env *Env, cfg config.Config, name string) (string, error) {
	person, err := agentname.Resolve(cfg.PeopleNames(), name)
	if err == nil {
		return person, nil
	}
	if agent, aerr := agentname.Resolve(cfg.AgentNames(), name); aerr == nil {
		return "", withHint(fmt.Errorf("%s is an agent, not a person: reply answers messages in a person's mailbox", agent),
			fmt.Sprintf("to write to %s, use 'agentctl send --to %s TEXT'", agent, agent))
	}
	return "", withHint(fmt.Errorf("unknown person %q", name), fmt.Sprintf("the people of this runtime are %v (people: in %s)", cfg.PeopleNames(), config.Path(env.Root)))
}

// pendingFor finds message id waiting in mb's inbox, or says where it is
// instead.
func pendingFor(mb *mailbox.Mailbox, id string) (mailbox.Entry, error) {
	found, err := mb.Locate(id)
	if err != nil {
		return mailbox.Entry{}, err
	}
	for _, e := range found {
		if e.State == mailbox.StatePending {
			return e, nil
		}
	}
	for _, e := range found {
		if e.State == mailbox.StateDone && e.Receipt != nil && e.Receipt.Outcome == "answered" {
			return mailbox.Entry{}, withHint(fmt.Errorf("%s was answered already (answer %v); a second answer would be a duplicate", id, e.Receipt.Data["reply_id"]),
				fmt.Sprintf("to add something, write to its sender: agentctl send --to %s --reply-to %s TEXT", dash(e.Message.From), id))
		}
		if e.State != mailbox.StatePending {
			return mailbox.Entry{}, fmt.Errorf("%s is not waiting in %s's inbox: it is %s (%s)", id, mb.Agent, e.State, e.File)
		}
	}
	return mailbox.Entry{}, withHint(fmt.Errorf("no message %s in %s's mailbox", id, mb.Agent), "list what waits with 'agentctl inbox "+mb.Agent+"'")
}
