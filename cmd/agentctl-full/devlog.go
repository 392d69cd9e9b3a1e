package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/internal/sizecap"
)

const devlogUsage = `
Usage: agentctl devlog AGENT TEXT... [--by NAME]
       agentctl devlog AGENT - [--by NAME]

Adds a human note to an agent's devlog (<root>/devlogs/AGENT.md), as one
entry appended in a single write beside the agent's own entries. With "-"
the note is read from standard input.

Examples:
  agentctl devlog Agent-3 "Paused for the release; back at 14:00"
  git log -1 --format=%B | agentctl devlog Agent-3 - --by release-bot
`

func runDevlog(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "devlog", devlogUsage)
	by := fs.String("by", os.Getenv("USER"), "who writes the note")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 2, -1, "an agent and the note's text"); err != nil {
		return err
	}
	text := strings.Join(rest[1:], " ")
	if len(rest) == 2 && rest[1] == "-" {
		data, err := sizecap.ReadAll(env.Stdin, "the note on stdin")
		if err != nil {
			return fmt.Errorf("cannot read the note: %w", err)
		}
		text = string(data)
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	n, err := cli.RuntimeOf(env, cfg).Note(rest[0], *by, text)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "noted in %s\n", n.Path)
	return nil
}
