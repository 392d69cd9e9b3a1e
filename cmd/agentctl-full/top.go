package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"

	"github.com/agentctl/agentctl/agents/missioncontrol"
	"github.com/agentctl/agentctl/cmd/internal/cli"
)

const topUsage = `
Usage: agentctl top

Mission control in the terminal: one row per agent (its state, the turn
it takes and for how long, its queue by priority, done and dead counts,
its last devlog entry; stalled turns stand out), the board's columns,
dead letters and what waits for people, redrawn from the runtime's own
file events.

Keys: tab switches between agents and dead letters, ↑/↓ select, s skips
the selected agent's turn (after y), r retries the selected dead letter,
q quits. They do what 'agentctl skip' and 'agentctl retry' do.

Examples:
  agentctl top
  agentctl --root /srv/swarm top
`

func runTop(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "top", topUsage)
	rest, err := cli.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := cli.WantArgs(fs, rest, 0, 0, "no arguments"); err != nil {
		return err
	}
	if f, ok := env.Stdin.(*os.File); !ok || !term.IsTerminal(f.Fd()) {
		return cli.WithHint(errors.New("top: its input is not a terminal"),
			"run it in a terminal; scripts can read 'agentctl status --json', and 'agentctl serve' shows the same in a browser")
	}
	cfg, err := cli.LoadConfig(env)
	if err != nil {
		return err
	}
	feed, err := missioncontrol.NewFeed(env.Root, mcSettings(cfg), missioncontrol.FeedOptions{})
	if err != nil {
		return fmt.Errorf("cannot watch the runtime: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go feed.Run(ctx)
	model := &missioncontrol.Terminal{Feed: feed, Actions: mcActions(env, cfg)}
	p := tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithInput(env.Stdin), tea.WithOutput(env.Stdout))
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("top: %w", err)
	}
	return nil
}
