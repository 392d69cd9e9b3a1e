package main

import (
	"context"
	"fmt"

	"github.com/agentctl/agentctl/agents/actions/turns"
	"github.com/agentctl/agentctl/cmd/internal/cli"
)

const approveUsage = `
Usage: agentctl approve ID [--as NAME]

Applies the effect that approval request ID holds: what an agent's reply
asked for and a guardrail (guardrails: in agentctl.yaml, level confirm)
held for a person. The held messages are sent, or the held board change is
made, exactly as the reply asked, once; the request is archived with the
outcome "approved", and the audit log (audit/YYYY-MM-DD.jsonl) says so.

Requests wait in the person's mailbox (human's, or NAME's with --as) as
messages of type approval; their text says what approving does. A request
is settled once: approving it again, or approving a denied one, is refused.

Examples:
  agentctl inbox human
  agentctl approve msg_3f2a9c0d1e4b5a6c7d8e9f01
  agentctl approve --as alice msg_3f2a9c0d1e4b5a6c7d8e9f01
`

func runApprove(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "approve", approveUsage)
	as := fs.String("as", "", "the `person` whose mailbox holds the request (default: the person in the loop)")
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
	done, err := turns.Runtime{Runtime: cli.RuntimeOf(env, cfg)}.Approve(ctx, *as, rest[0])
	if err != nil {
		return err
	}
	for _, r := range done {
		fmt.Fprintln(env.Stdout, r)
	}
	return nil
}
