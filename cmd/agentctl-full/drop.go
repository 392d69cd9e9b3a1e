package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/agents/receipt"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/mailbox"
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
	ref := rest[0]
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	all, err := cli.RuntimeOf(env, cfg).Locate(ref, *only, true)
	if err != nil {
		return err
	}
	if busy := actions.InState(all, mailbox.StateProcessing); len(busy) > 0 {
		agent := busy[0].Mailbox.Agent
		return cli.WithHint(fmt.Errorf("%s is in flight in %s's mailbox: only its turn can settle it", ref, agent),
			fmt.Sprintf("abandon the turn with 'agentctl skip %s', then drop it", agent))
	}
	found, err := actions.OneOf(ref, "pending or dead", actions.InState(all, mailbox.StatePending, mailbox.StateDead), all)
	if err != nil {
		return err
	}
	why := *reason
	if why == "" {
		why = "no reason given"
	}
	data, err := receipt.Encode(receipt.Data{Reason: why, Was: found.Entry.State})
	if err != nil {
		return err
	}
	err = found.Mailbox.Settle(found.Entry, mailbox.Receipt{Outcome: "dropped", Data: data}, time.Now().UTC())
	if errors.Is(err, mailbox.ErrMoved) {
		return cli.WithHint(fmt.Errorf("%s moved while it was being dropped (a runner claimed it?)", ref),
			fmt.Sprintf("see where it is with 'agentctl inbox %s --state all'", found.Mailbox.Agent))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "dropped %s from %s's %s messages: archived with the reason %q\n", ref, found.Mailbox.Agent, found.Entry.State, why)
	return nil
}
