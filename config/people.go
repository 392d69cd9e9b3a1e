package config

import (
	"fmt"
	"strings"

	"github.com/agentctl/agentctl/internal/agentname"
)

// DefaultPeople are the people of a runtime whose agentctl.yaml names none:
// the person at the keyboard, who sends with `agentctl send` (from "human")
// and hears back receipts, notices and agents' questions.
var DefaultPeople = []string{"human"}

// PeopleNames lists the configured people in file order. A person has a
// mailbox like an agent but never a runner: what arrives there waits for
// `agentctl inbox` and `agentctl reply`.
func (c Config) PeopleNames() []string {
	if c.People == nil {
		return append([]string(nil), DefaultPeople...)
	}
	return append([]string(nil), c.People...)
}

// MailboxNames lists everyone who has a mailbox: the agents, then the
// people. Resolve a name typed by a user or written in a message against
// it (agentname.Resolve) before it becomes a path.
func (c Config) MailboxNames() []string {
	return append(c.AgentNames(), c.PeopleNames()...)
}

// IsPerson reports whether name, already resolved, is one of the people.
func (c Config) IsPerson(name string) bool {
	for _, p := range c.PeopleNames() {
		if p == name {
			return true
		}
	}
	return false
}

// validatePeople checks that people's names are safe folder names, listed
// once, and not also agents': a name is either a runner's or a person's.
func (c Config) validatePeople() error {
	seen := map[string]bool{}
	for _, a := range c.Agents {
		seen[strings.ToLower(a.Name)] = true
	}
	for i, p := range c.People {
		if err := agentname.Valid(p); err != nil {
			return fmt.Errorf("people[%d]: %w", i, err)
		}
		key := strings.ToLower(p)
		if key == "all" {
			return fmt.Errorf("people[%d]: %q is reserved: send --to all means every agent", i, p)
		}
		if seen[key] {
			return fmt.Errorf("people[%d]: %q is listed twice, or is also an agent", i, p)
		}
		seen[key] = true
	}
	return nil
}

// Human is the person who hears what needs a person and has no one else
// to go to (agents' questions, threads over their hop budget, notices for
// senders without a mailbox, stalls with no supervisor): the first of the
// people, or "" when the runtime has none.
func (c Config) Human() string {
	if people := c.PeopleNames(); len(people) > 0 {
		return people[0]
	}
	return ""
}
