package main

import (
	"context"
	"fmt"

	"github.com/agentctl/agentctl/cmd/internal/cli"
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

func runRetry(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "retry", retryUsage)
	toName := fs.String("to", "", "re-address the message and deliver it to this `agent`")
	only := fs.String("agent", "", "search only this agent's or person's dead letters (`name`)")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 1, 1, "one message ID"); err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	r, err := cli.RuntimeOf(env, cfg).Retry(ctx, rest[0], *toName, *only)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s is back in %s's inbox (it was dead: %s)\n", r.Message.ID, r.Mailbox.Agent, cli.Dash(r.Was.Reason))
	return nil
}
