package main

import (
	"context"
	"fmt"

	"github.com/agentctl/agentctl/cmd/internal/cli"
)

const dropUsage = `
Usage: agentctl drop ID [--reason TEXT] [--agent NAME]

Settles a pending or dead message without working it: it is archived with
a receipt whose outcome is "dropped", with the reason. Nothing is deleted;
'agentctl inbox NAME --state done' lists it afterwards. A message in flight
is refused: abandon its turn with 'agentctl skip AGENT' instead.

ID is a message id, or the file name of a dead letter that could not be
read. Every agent's and person's mailbox is searched unless --agent names
one.

Examples:
  agentctl drop msg_20261122_101500_1a2b3c4d5e6f --reason "done by hand"
  agentctl drop 20261122T101500Z-notes.txt --agent Agent-3 --reason "not a message"
`

func runDrop(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "drop", dropUsage)
	reason := fs.String("reason", "", "why it is dropped, kept in its receipt (`text`)")
	only := fs.String("agent", "", "search only this agent's or person's mailbox (`name`)")
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
	d, err := cli.RuntimeOf(env, cfg).Drop(ctx, rest[0], *only, *reason)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "dropped %s from %s's %s messages: archived with the reason %q\n", rest[0], d.Mailbox.Agent, d.Entry.State, d.Reason)
	return nil
}
