package cli

import (
	"errors"
	"fmt"

	"github.com/agentctl/agentctl/agents/actions"
	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/mailbox"
)

// LoadConfig reads the runtime's agentctl.yaml, with the fix when there is
// none.
func LoadConfig(env *Env) (config.Config, error) {
	cfg, err := config.Load(env.Root)
	if errors.Is(err, config.ErrNotFound) {
		return cfg, WithHint(err, fmt.Sprintf("run 'agentctl init' to create a runtime in %s, or pass --root", env.Root))
	}
	return cfg, err
}

// RuntimeOf is the runtime the actions of package actions change.
func RuntimeOf(env *Env, cfg config.Config) actions.Runtime {
	return actions.Runtime{Root: env.Root, Config: cfg}
}

// OpenMailbox resolves a user-typed name against everyone who has a
// mailbox and opens that mailbox (actions.Runtime.OpenMailbox).
func OpenMailbox(env *Env, cfg config.Config, name string) (*mailbox.Mailbox, error) {
	return RuntimeOf(env, cfg).OpenMailbox(name)
}
