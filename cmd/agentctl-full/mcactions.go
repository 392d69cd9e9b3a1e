package main

import (
	"github.com/agentctl/agentctl/agents/actions/turns"
	"github.com/agentctl/agentctl/agents/missioncontrol"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/projectboard"
)

// mcSettings hands mission control the runtime's settings as plain values.
func mcSettings(cfg config.Config) missioncontrol.Settings {
	s := missioncontrol.Settings{
		Agents: cfg.AgentNames(), People: cfg.PeopleNames(), StallAfter: cfg.Recovery.StallAfter.D(),
		StaleAfter: cfg.Recovery.StaleAfter.D(), ConfigFile: config.FileName, Remote: map[string]string{},
	}
	if cfg.Mailbox.Watch == "poll" {
		s.Poll = cfg.Mailbox.PollInterval.D()
	}
	for _, a := range cfg.Agents {
		if cfg.Remote(a) {
			s.Remote[a.Name] = a.Machine
		}
	}
	return s
}

// mcActions are mission control's changes, made by package actions as the
// commands of the same names make them.
func mcActions(env *cli.Env, cfg config.Config) *missioncontrol.RuntimeActions {
	return &missioncontrol.RuntimeActions{
		Runtime: turns.Runtime{Runtime: cli.RuntimeOf(env, cfg)},
		Board:   cli.BoardOf(env, &projectboard.Store{Root: env.Root}),
	}
}
