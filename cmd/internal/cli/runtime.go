package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

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

// NeedRuntime refuses, for a command that does not otherwise read
// agentctl.yaml, a root that holds no runtime: a mistyped --root, or a
// folder where init never ran, would get a runtime's folders made there by
// the command (a board in ./runtime), one that no runner ever reads.
func NeedRuntime(env *Env) error {
	if _, err := os.Stat(config.Path(env.Root)); errors.Is(err, fs.ErrNotExist) {
		return WithHint(fmt.Errorf("%w in %s", config.ErrNotFound, env.Root), fmt.Sprintf("run 'agentctl init' to create a runtime in %s, or pass --root", env.Root))
	}
	return nil
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
