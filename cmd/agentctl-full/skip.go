package main

import (
	"context"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/agents/actions/turns"
	"github.com/agentctl/agentctl/cmd/internal/cli"
)

const skipUsage = `
Usage: agentctl skip AGENT [--reason TEXT] [--wait 30s] [--id ID]

Abandons the turn AGENT is taking, safely, and records it: the message in
flight goes to deadletter/ with the reason "skipped by a person: TEXT", the
devlog gets an entry with the outcome "skipped", and the sender hears of it
as of any dead letter. 'agentctl retry ID' brings the message back.

When AGENT's runner is up, skip asks it (skip.json in the mailbox folder)
and waits up to --wait for the message to leave processing/: the runner
cancels the turn, which releases the desktop input lock and restores the
clipboard, or ends the agent's command and its children. When no runner is
up, skip settles the message itself, under the same lock a runner takes.

Examples:
  agentctl skip Agent-3 --reason "stuck on a modal dialog"
  agentctl skip Agent-4 --reason "wrong task" --wait 1m
`

func runSkip(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "skip", skipUsage)
	reason := fs.String("reason", "", "why the turn is abandoned, kept with the dead letter (`text`)")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for a running runner to let go (`duration`)")
	onlyID := fs.String("id", "", "the message in flight, when processing/ holds several (`id`)")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 1, 1, "one agent name"); err != nil {
		return err
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	s, err := turns.Runtime{Runtime: cli.RuntimeOf(env, cfg)}.Skip(ctx, turns.SkipRequest{
		Agent: rest[0], ID: *onlyID, Reason: *reason, Wait: *wait, Log: env.Stderr,
		OnAsk: func(a turns.Skipped) {
			fmt.Fprintf(env.Stdout, "asked %s's runner (pid %d) to skip %s; waiting up to %s\n", a.Agent, a.RunnerPID, a.ID, *wait)
		},
	})
	if err != nil {
		return err
	}
	switch s.By {
	case turns.SkippedHere:
		fmt.Fprintf(env.Stdout, "%s skipped: no runner was up; it is in %s's deadletter/\n", s.ID, s.Agent)
	case turns.SkippedAfterRunner:
		fmt.Fprintf(env.Stdout, "%s skipped: the runner stopped meanwhile; it is in %s's deadletter/\n", s.ID, s.Agent)
	default:
		fmt.Fprintf(env.Stdout, "%s skipped: it is in %s's %s\n", s.ID, s.Agent, s.File)
	}
	fmt.Fprintf(env.Stdout, "bring it back with: agentctl retry %s\n", s.ID)
	return nil
}
