package main

import (
	"errors"
	"fmt"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// loadConfig reads the runtime's agentctl.yaml, with the fix when there is
// none.
func loadConfig(env *Env) (config.Config, error) {
	cfg, err := config.Load(env.Root)
	if errors.Is(err, config.ErrNotFound) {
		return cfg, withHint(err, fmt.Sprintf("run 'agentctl init' to create a runtime in %s, or pass --root", env.Root))
	}
	return cfg, err
}

// runtimeOf is the runtime the actions of package actions change.
func runtimeOf(env *Env, cfg config.Config) actions.Runtime {
	return actions.Runtime{Root: env.Root, Config: cfg}
}

// openMailbox resolves a user-typed name against everyone who has a
// mailbox and opens that mailbox (actions.Runtime.OpenMailbox).
func openMailbox(env *Env, cfg config.Config, name string) (*mailbox.Mailbox, error) {
	return runtimeOf(env, cfg).OpenMailbox(name)
}

// resolveAgent resolves a user-typed agent name.
func resolveAgent(env *Env, cfg config.Config, name string) (string, error) {
	return runtimeOf(env, cfg).ResolveAgent(name)
}

// consumerOptions hands the mailbox settings of agentctl.yaml down as plain
// values.
func consumerOptions(cfg config.Config) mailbox.Options { return actions.ConsumerOptions(cfg) }

// intakeOptions: see actions.IntakeOptions; the places old writers use
// are the runner's to add (runnerSettings).
func intakeOptions(cfg config.Config) intake.Options { return actions.IntakeOptions(cfg) }
