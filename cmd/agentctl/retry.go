package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/mailbox"
)

const retryUsage = `
Usage: agentctl retry ID [--to NAME] [--agent NAME]

Puts dead letter ID back into an inbox, to be worked again: its attempts
start over, its reason file goes, and how it died (the reason and when) is
kept in the message's meta under deadletter_history, so that its archived
copy carries it. It gets past duplicate detection on purpose.

ID is a message id, or the file name of a dead letter that could not be
read (as 'agentctl inbox NAME --state dead' lists it); such a file is read
again, and if it still cannot be, retry says why and leaves it.

Every agent's and person's dead letters are searched unless --agent names
one mailbox. With --to the message is re-addressed and delivered to that
agent instead, e.g. a Dream.OS queue entry meant for another agent.

Examples:
  agentctl inbox Agent-3 --state dead
  agentctl retry msg_20261122_101500_1a2b3c4d5e6f
  agentctl retry dream-42 --to Agent-2
  agentctl retry 20261122T101500Z-notes.md --agent Agent-3
`

func runRetry(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "retry", retryUsage)
	toName := fs.String("to", "", "re-address the message and deliver it to this `agent`")
	only := fs.String("agent", "", "search only this agent's or person's dead letters (`name`)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, rest, 1, 1, "one message ID"); err != nil {
		return err
	}
	cfg, err := loadConfig(env)
	if err != nil {
		return err
	}
	msg, target, dl, err := retryDeadLetter(env, cfg, rest[0], *toName, *only)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s is back in %s's inbox (it was dead: %s)\n", msg.ID, target.Agent, dash(dl.Reason))
	return nil
}

// retryDeadLetter puts the dead letter ref (an id or a file name) back into
// an inbox: the mailbox of toName when set, else its own. only limits the
// search to one mailbox. It returns the message as requeued, where it went
// and the dead letter it was.
func retryDeadLetter(env *Env, cfg config.Config, ref, toName, only string) (mailbox.Message, *mailbox.Mailbox, mailbox.DeadLetter, error) {
	var none mailbox.Message
	all, err := locateEverywhere(env, cfg, ref, only, false)
	if err != nil {
		return none, nil, mailbox.DeadLetter{}, err
	}
	found, err := oneOf(ref, "a dead letter", inState(all, mailbox.StateDead), all)
	if err != nil {
		return none, nil, mailbox.DeadLetter{}, err
	}
	dl := found.mb.ReadDeadLetter(found.e)
	if dl.Problem != "" {
		return none, nil, dl, withHint(fmt.Errorf("cannot retry %s: it still cannot be read: %s", found, dl.Problem),
			fmt.Sprintf("fix %s/%s and run retry again, or settle it with 'agentctl drop %s'", found.mb.Dir, dl.File, ref))
	}
	target := found.mb
	switch {
	case toName != "":
		if target, err = openMailbox(env, cfg, toName); err != nil {
			return none, nil, dl, err
		}
	case dl.Message.To != "" && !strings.EqualFold(dl.Message.To, found.mb.Agent):
		to, err := agentname.Resolve(cfg.MailboxNames(), dl.Message.To)
		if err != nil {
			return none, nil, dl, withHint(fmt.Errorf("cannot retry %s: it is addressed to %q, who has no mailbox here", ref, dl.Message.To),
				"deliver it to someone who has one with --to AGENT")
		}
		return none, nil, dl, withHint(fmt.Errorf("cannot retry %s in %s's mailbox: it is addressed to %s", ref, found.mb.Agent, to),
			fmt.Sprintf("deliver it there with: agentctl retry %s --to %s", ref, to))
	}
	msg, err := found.mb.Requeue(dl, target, time.Now())
	return msg, target, dl, err
}
