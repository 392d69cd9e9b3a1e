package main

import (
	"context"
	"fmt"

	"github.com/agentctl/agentctl/cmd/internal/cli"
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

func runReply(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "reply", replyUsage)
	as := fs.String("as", "human", "the `person` whose mailbox holds the message")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 1, -1, "ID and the answer's TEXT (or -)"); err != nil {
		return err
	}
	id := rest[0]
	text, err := cli.MessageText(env, "reply", rest[1:])
	if err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	r, err := cli.RuntimeOf(env, cfg).Reply(ctx, *as, id, text)
	if err != nil {
		return err
	}
	if r.SentBefore {
		cli.Notef(env, "%s was answered before (%s); this text was not sent, and the question is now archived", id, r.Answer.ID)
		return nil
	}
	fmt.Fprintln(env.Stdout, r.Answer.ID)
	return nil
}
