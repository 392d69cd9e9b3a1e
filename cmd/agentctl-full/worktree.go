package main

import (
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/config/driverconf"
	"github.com/agentctl/agentctl/cursor"
	"github.com/agentctl/agentctl/internal/layout"
	"github.com/agentctl/agentctl/internal/seatworktree"
)

// seatSettings are the agent's driver settings. An exec seat with
// worktree: true works in its own git worktree (worktrees/<agent> under
// the runtime folder, branch agentctl/<agent>), made by its first run with
// git worktree add, the one thing done to the user's repository.
func seatSettings(root string, agent config.Agent, g config.GUI) (cursor.Settings, error) {
	s := driverconf.Settings(agent, g)
	if !agent.Worktree || agent.EffectiveDriver() != config.DriverExec {
		return s, nil
	}
	a, err := layout.For(root, agent.Name)
	if err != nil {
		return s, err
	}
	dir, err := seatworktree.Ensure(s.Exec.Dir, a.Worktree(), "agentctl/"+agent.Name)
	if err != nil {
		return s, cli.WithHint(err, "set cwd of "+agent.Name+" to a folder inside the git repository it works on, or drop worktree: true")
	}
	s.Exec.Dir = dir
	return s, nil
}
