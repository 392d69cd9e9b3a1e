package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/devlog"
	"github.com/agentctl/agentctl/internal/agentname"
)

const tailUsage = `
Usage:
  agentctl tail AGENT [-n N] [-f]
  agentctl tail --all [-n N] [-f]

Prints the last N entries of an agent's devlog (<root>/devlogs/AGENT.md), or
of every agent's devlog interleaved by time with --all. With -f it keeps
printing entries as they are appended, like tail -F: it follows a devlog
that is rotated (renamed away and recreated, or truncated) and one that
does not exist yet. Stop it with Ctrl-C.

Examples:
  agentctl tail Agent-3
  agentctl tail Agent-3 -n 50 -f
  agentctl tail --all -f
`

func runTail(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "tail", tailUsage)
	n := fs.Int("n", 10, "number of entries `N` to print first")
	follow := fs.Bool("f", false, "keep printing new entries")
	all := fs.Bool("all", false, "every agent's devlog, interleaved by time")
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if *all {
		err = cli.WantArgs(fs, rest, 0, 0, "no agent with --all")
	} else {
		err = cli.WantArgs(fs, rest, 1, 1, "one agent name, or --all")
	}
	if err != nil {
		return err
	}
	if *n < 0 {
		return cli.UsageError{Msg: "tail: -n must be 0 or more"}
	}
	agents, err := devlogAgents(env, rest, *all)
	if err != nil {
		return err
	}
	paths := make([]string, len(agents))
	for i, a := range agents {
		if paths[i], err = devlog.Path(env.Root, a); err != nil {
			return err
		}
	}
	fl, sizes := devlog.NewFollower(env.Stdout, paths...)
	if len(paths) == 1 {
		text, err := devlog.Last(paths[0], *n, sizes[0])
		if err != nil {
			return err
		}
		env.Stdout.Write(text)
	} else {
		var logs [][]devlog.Entry
		for i, p := range paths {
			text, err := devlog.Last(p, *n, sizes[i])
			if err != nil {
				return err
			}
			entries, err := devlog.Read(strings.NewReader(string(text)))
			if err != nil {
				return err
			}
			logs = append(logs, entries)
		}
		for _, e := range devlog.Merge(*n, logs...) {
			env.Stdout.Write(devlog.Format(e))
		}
	}
	if !*follow {
		return nil
	}
	if err := fl.Run(ctx); err != nil {
		return fmt.Errorf("cannot follow devlogs: %w", err)
	}
	return nil
}

// devlogAgents resolves the agents named on the command line against
// agentctl.yaml, or lists them all.
func devlogAgents(env *cli.Env, names []string, all bool) ([]string, error) {
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return nil, err
	}
	if all {
		return cfg.AgentNames(), nil
	}
	var agents []string
	for _, n := range names {
		a, err := agentname.Resolve(cfg.AgentNames(), n)
		if err != nil {
			return nil, cli.WithHint(err, "known agents: "+strings.Join(cfg.AgentNames(), ", "))
		}
		agents = append(agents, a)
	}
	return agents, nil
}
