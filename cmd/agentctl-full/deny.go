package main

import (
	"context"
	"fmt"

	"github.com/agentctl/agentctl/agents/actions/turns"
	"github.com/agentctl/agentctl/cmd/internal/cli"
)

const denyUsage = `
Usage: agentctl deny ID [--reason TEXT] [--as NAME]

Refuses the effect that approval request ID holds (see 'agentctl approve'):
nothing of it happens. The request is archived with the outcome "denied",
the agent whose reply asked for it gets a notice saying what was denied and
why, and the audit log (audit/YYYY-MM-DD.jsonl) says so. A request is
settled once: denying it again, or denying an approved one, is refused.

Examples:
  agentctl deny msg_3f2a9c0d1e4b5a6c7d8e9f01 --reason "Agent-2 owns that task; ask it."
  agentctl deny --as alice msg_3f2a9c0d1e4b5a6c7d8e9f01
`

func runDeny(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "deny", denyUsage)
	as := fs.String("as", "", "the `person` whose mailbox holds the request (default: the person in the loop)")
	reason := fs.String("reason", "", "why, for the asking agent and the audit log (`text`)")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 1, 1, "the approval request's ID"); err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	notice, err := turns.Runtime{Runtime: cli.RuntimeOf(env, cfg)}.Deny(ctx, *as, rest[0], *reason)
	if err != nil {
		return err
	}
	if notice.ID == "" {
		fmt.Fprintf(env.Stdout, "denied %s; the turn of %s that asked hears it\n", rest[0], notice.To)
		return nil
	}
	fmt.Fprintf(env.Stdout, "denied %s; %s told (%s)\n", rest[0], notice.To, notice.ID)
	return nil
}
