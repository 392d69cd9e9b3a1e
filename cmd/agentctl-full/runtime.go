package main

import (
	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/cmd/internal/cli"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// resolveAgent resolves a user-typed agent name.
func resolveAgent(env *cli.Env, cfg config.Config, name string) (string, error) {
	return cli.RuntimeOf(env, cfg).ResolveAgent(name)
}

// consumerOptions hands the mailbox settings of agentctl.yaml down as plain
// values.
func consumerOptions(cfg config.Config) mailbox.Options { return actions.ConsumerOptions(cfg) }

// intakeOptions: see actions.IntakeOptions; the places old writers use
// are the runner's to add (runnerSettings).
func intakeOptions(cfg config.Config) intake.Options { return actions.IntakeOptions(cfg) }
