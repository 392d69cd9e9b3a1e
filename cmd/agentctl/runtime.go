package main

import (
	"errors"
	"fmt"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/agentname"
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

// openMailbox resolves a user-typed name against everyone who has a
// mailbox, agents and people, and opens that mailbox. Nothing becomes a path
// before that check. A configured person's missing mailbox is created:
// runtimes made before people existed have none.
func openMailbox(env *Env, cfg config.Config, name string) (*mailbox.Mailbox, error) {
	who, err := agentname.Resolve(cfg.MailboxNames(), name)
	if err != nil {
		return nil, withHint(didYouMean(err, name, cfg.MailboxNames()), mailboxesHint(env, cfg))
	}
	if cfg.IsPerson(who) {
		if err := mailbox.Create(env.Root, who); err != nil {
			return nil, err
		}
	}
	mb, err := mailbox.Open(env.Root, who)
	if errors.Is(err, mailbox.ErrNoMailbox) {
		return nil, withHint(err, "run 'agentctl init' to create the mailboxes of the configured agents")
	}
	return mb, err
}

// openAgentMailbox opens the mailbox of an agent, refusing people with the
// reason: they have no runner and no turns.
func openAgentMailbox(env *Env, cfg config.Config, name string) (*mailbox.Mailbox, error) {
	if _, err := resolveAgent(env, cfg, name); err != nil {
		return nil, err
	}
	return openMailbox(env, cfg, name)
}

// resolveAgent resolves a user-typed agent name; a person's name gets an
// error saying what people do instead.
func resolveAgent(env *Env, cfg config.Config, name string) (string, error) {
	agent, err := agentname.Resolve(cfg.AgentNames(), name)
	if err == nil {
		return agent, nil
	}
	if person, perr := agentname.Resolve(cfg.PeopleNames(), name); perr == nil {
		return "", withHint(fmt.Errorf("%s is a person, not an agent: people have a mailbox but no runner and no turns", person),
			fmt.Sprintf("read what waits for %s with 'agentctl inbox %s' and answer with 'agentctl reply ID TEXT'", person, person))
	}
	return "", withHint(didYouMean(err, name, cfg.AgentNames()), fmt.Sprintf("the agents of this runtime are %v (see %s)", cfg.AgentNames(), config.Path(env.Root)))
}

// didYouMean adds to an unknown name's error the one name it is probably a
// typo of.
func didYouMean(err error, name string, known []string) error {
	if s := suggest(name, known); s != "" && agentname.Valid(name) == nil {
		return fmt.Errorf("%w (did you mean %s?)", err, s)
	}
	return err
}

func mailboxesHint(env *Env, cfg config.Config) string {
	return fmt.Sprintf("the agents of this runtime are %v and its people %v (see %s)", cfg.AgentNames(), cfg.PeopleNames(), config.Path(env.Root))
}

// consumerOptions hands the mailbox settings of agentctl.yaml down as plain
// values.
func consumerOptions(cfg config.Config) mailbox.Options {
	return mailbox.Options{
		Known:       cfg.AgentNames(),
		MaxAttempts: cfg.Mailbox.MaxAttempts,
		Backoff:     cfg.Mailbox.Backoff.D(),
		Settle:      cfg.Mailbox.Settle.D(),
	}
}

// intakeOptions hands the settings of agentctl.yaml for taking in
// inbox.json down as plain values; the places old writers use are the
// runner's to add (runnerSettings).
func intakeOptions(cfg config.Config) intake.Options {
	return intake.Options{MaxInboxJSONBytes: cfg.Mailbox.MaxInboxJSONBytes}
}

// adminOptions are the consumer settings of commands that act on any
// mailbox by hand: messages to people are as valid there as to agents.
func adminOptions(cfg config.Config) mailbox.Options {
	o := consumerOptions(cfg)
	o.Known = cfg.MailboxNames()
	return o
}
