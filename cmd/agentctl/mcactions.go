package main

import (
	"github.com/agentctl/agentctl/agents/missioncontrol"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/projectboard"
)

// mcActions are mission control's changes, made by package actions as the
// commands of the same names make them.
func mcActions(env *Env, cfg config.Config) *missioncontrol.RuntimeActions {
	return &missioncontrol.RuntimeActions{
		Runtime: runtimeOf(env, cfg),
		Board:   boardOf(env, &projectboard.Store{Root: env.Root}),
	}
}
