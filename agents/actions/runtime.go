package actions

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentctl/agentctl/config"
	"github.com/agentctl/agentctl/internal/agentname"
	"github.com/agentctl/agentctl/internal/clock"
	"github.com/agentctl/agentctl/internal/typo"
	"github.com/agentctl/agentctl/mailbox"
	"github.com/agentctl/agentctl/mailbox/intake"
)

// Runtime is the runtime folder the actions change, with its settings.
type Runtime struct {
	Root   string
	Config config.Config
	// Clock stamps what the actions write and times skip's wait;
	// clock.System when nil.
	Clock clock.Clock
}

func (rt Runtime) now() time.Time { return clock.Or(rt.Clock).Now() }

// OpenMailbox resolves a user-typed name against everyone who has a
// mailbox, agents and people, and opens that mailbox. Nothing becomes a path
// before that check. A configured person's missing mailbox is created:
// runtimes made before people existed have none.
func (rt Runtime) OpenMailbox(name string) (*mailbox.Mailbox, error) {
	cfg := rt.Config
	who, err := agentname.Resolve(cfg.MailboxNames(), name)
	if err != nil {
		return nil, WithHint(didYouMean(err, name, cfg.MailboxNames()), rt.mailboxesHint())
	}
	if cfg.IsPerson(who) {
		if err := mailbox.Create(rt.Root, who); err != nil {
			return nil, err
		}
	}
	mb, err := mailbox.Open(rt.Root, who)
	if errors.Is(err, mailbox.ErrNoMailbox) {
		return nil, WithHint(err, "run 'agentctl init' to create the mailboxes of the configured agents")
	}
	return mb, err
}

// OpenAgentMailbox opens the mailbox of an agent, refusing people with the
// reason: they have no runner and no turns.
func (rt Runtime) OpenAgentMailbox(name string) (*mailbox.Mailbox, error) {
	if _, err := rt.ResolveAgent(name); err != nil {
		return nil, err
	}
	return rt.OpenMailbox(name)
}

// ResolveAgent resolves a user-typed agent name; a person's name gets an
// error saying what people do instead.
func (rt Runtime) ResolveAgent(name string) (string, error) {
	cfg := rt.Config
	agent, err := agentname.Resolve(cfg.AgentNames(), name)
	if err == nil {
		return agent, nil
	}
	if person, perr := agentname.Resolve(cfg.PeopleNames(), name); perr == nil {
		return "", WithHint(fmt.Errorf("%s is a person, not an agent: people have a mailbox but no runner and no turns", person),
			fmt.Sprintf("read what waits for %s with 'agentctl inbox %s' and answer with 'agentctl reply ID TEXT'", person, person))
	}
	return "", WithHint(didYouMean(err, name, cfg.AgentNames()), fmt.Sprintf("the agents of this runtime are %v (see %s)", cfg.AgentNames(), config.Path(rt.Root)))
}

// ResolvePerson resolves a user-typed person's name; an agent's name gets
// an error saying how to write to agents.
func (rt Runtime) ResolvePerson(name string) (string, error) {
	cfg := rt.Config
	person, err := agentname.Resolve(cfg.PeopleNames(), name)
	if err == nil {
		return person, nil
	}
	if agent, aerr := agentname.Resolve(cfg.AgentNames(), name); aerr == nil {
		return "", WithHint(fmt.Errorf("%s is an agent, not a person: reply answers messages in a person's mailbox", agent),
			fmt.Sprintf("to write to %s, use 'agentctl send --to %s TEXT'", agent, agent))
	}
	return "", WithHint(fmt.Errorf("unknown person %q", name), fmt.Sprintf("the people of this runtime are %v (people: in %s)", cfg.PeopleNames(), config.Path(rt.Root)))
}

// didYouMean adds to an unknown name's error the one name it is probably a
// typo of.
func didYouMean(err error, name string, known []string) error {
	if s := typo.Closest(name, known); s != "" && agentname.Valid(name) == nil {
		return fmt.Errorf("%w (did you mean %s?)", err, s)
	}
	return err
}

func (rt Runtime) mailboxesHint() string {
	return fmt.Sprintf("the agents of this runtime are %v and its people %v (see %s)", rt.Config.AgentNames(), rt.Config.PeopleNames(), config.Path(rt.Root))
}

// ConsumerOptions hands the mailbox settings of agentctl.yaml down as plain
// values.
func ConsumerOptions(cfg config.Config) mailbox.Options {
	return mailbox.Options{
		Known:       cfg.AgentNames(),
		MaxAttempts: cfg.Mailbox.MaxAttempts,
		Backoff:     cfg.Mailbox.Backoff.D(),
		Settle:      cfg.Mailbox.Settle.D(),
	}
}

// IntakeOptions hands the settings of agentctl.yaml for taking in
// inbox.json down as plain values; the places old writers use are the
// runner's to add. What is addressed to several agents or none goes to the
// first person for review.
func IntakeOptions(cfg config.Config) intake.Options {
	return intake.Options{MaxInboxJSONBytes: cfg.Mailbox.MaxInboxJSONBytes, Human: cfg.Human(), People: cfg.PeopleNames()}
}

// AdminOptions are the consumer settings of changes made to any mailbox by
// hand: messages to people are as valid there as to agents.
func AdminOptions(cfg config.Config) mailbox.Options {
	o := ConsumerOptions(cfg)
	o.Known = cfg.MailboxNames()
	return o
}
