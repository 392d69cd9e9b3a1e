package main

import (
	"errors"
	"fmt"

	"agentctl/config"
	"agentctl/internal/agentname"
	"agentctl/mailbox"
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

// openMailbox resolves a user-typed agent name against the configured
// agents and opens its mailbox. Nothing becomes a path before that check.
func openMailbox(env *Env, cfg config.Config, name string) (*mailbox.Mailbox, error) {
	agent, err := agentname.Resolve(cfg.AgentNames(), name)
	if err != nil {
		return nil, withHint(err, fmt.Sprintf("the agents of this runtime are %v (see %s)", cfg.AgentNames(), config.Path(env.Root)))
	}
	mb, err := mailbox.Open(env.Root, agent)
	if errors.Is(err, mailbox.ErrNoMailbox) {
		return nil, withHint(err, "run 'agentctl init' to create the mailboxes of the configured agents")
	}
	return mb, err
}

// consumerOptions hands the mailbox settings of agentctl.yaml down as plain
// values.
func consumerOptions(cfg config.Config) mailbox.Options {
	return mailbox.Options{
		Known:             cfg.AgentNames(),
		MaxAttempts:       cfg.Mailbox.MaxAttempts,
		Backoff:           cfg.Mailbox.Backoff.D(),
		Settle:            cfg.Mailbox.Settle.D(),
		MaxInboxJSONBytes: cfg.Mailbox.MaxInboxJSONBytes,
	}
}
