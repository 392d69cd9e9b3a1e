package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/atomicfile"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/mailbox"
)

const initUsage = `
Usage: agentctl init [--agents N] [--root DIR]

Creates a runtime folder: a mailbox for each agent and for each person
(people: in agentctl.yaml, by default human), the devlog, board, lore and
lock folders, and a commented agentctl.yaml listing Agent-1..Agent-N. A
runtime folder it creates is closed to other accounts of the machine.

Running it again never destroys anything: an existing agentctl.yaml is kept
as it is, and only missing folders are created, for the agents and people
it lists.

Examples:
  agentctl init
  agentctl init --agents 5
  agentctl --root /srv/swarm init --agents 8
`

// runtimeDirs are the shared folders of a runtime root, besides mailboxes.
var runtimeDirs = []func(root string) string{layout.Devlogs, layout.Boards, layout.Lore, layout.Locks}

func runInit(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "init", initUsage)
	n := fs.Int("agents", 3, "number of agents `N` (Agent-1..Agent-N) for a new agentctl.yaml")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	if *n < 1 || *n > 999 {
		return cli.UsageError{Msg: fmt.Sprintf("--agents %d: want a number from 1 to 999", *n)}
	}
	if err := atomicfile.MkdirRoot(env.Root); err != nil {
		return fmt.Errorf("cannot initialise %s: %w", env.Root, err)
	}
	for _, d := range runtimeDirs {
		if err := atomicfile.MkdirAll(d(env.Root)); err != nil {
			return fmt.Errorf("cannot initialise %s: %w", env.Root, err)
		}
	}

	cfg, err := config.Load(env.Root)
	switch {
	case errors.Is(err, config.ErrNotFound):
		names := make([]string, *n)
		for i := range names {
			names[i] = fmt.Sprintf("Agent-%d", i+1)
		}
		if err := atomicfile.WriteFile(config.Path(env.Root), config.Initial(names)); err != nil {
			return fmt.Errorf("cannot initialise %s: %w", env.Root, err)
		}
		if cfg, err = config.Load(env.Root); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "wrote %s\n", config.Path(env.Root))
	case err != nil:
		return cli.WithHint(err, "fix agentctl.yaml; init never overwrites it")
	default:
		fmt.Fprintf(env.Stdout, "kept %s\n", config.Path(env.Root))
		if cli.IsFlagSet(fs, "agents") {
			cli.Notef(env, "--agents is ignored because agentctl.yaml exists; add agents there")
		}
	}
	for _, name := range cfg.MailboxNames() {
		if err := mailbox.Create(env.Root, name); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.Stdout, "%s is ready with %d agents", env.Root, len(cfg.Agents))
	if people := cfg.PeopleNames(); len(people) > 0 {
		fmt.Fprintf(env.Stdout, " and a mailbox for %s", strings.Join(people, ", "))
	}
	fmt.Fprintln(env.Stdout)
	return nil
}
